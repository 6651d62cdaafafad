/**
 * Zod with the `.openapi()` extension applied once, for every schema in the service.
 */
import { z } from 'zod';
import { extendZodWithOpenApi } from '@asteasolutions/zod-to-openapi';

extendZodWithOpenApi(z);

export { z };
