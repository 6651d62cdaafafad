/**
 * Zod, as every schema in the service imports it. What the OpenAPI document says of a schema beyond
 * its type is Zod's own metadata: `.meta({ id })` makes it a component, `.describe()` and
 * `.meta({ description, format, type, ... })` add to its schema object (http/openapi-schema.ts).
 */
import { z } from 'zod';

export { z };
