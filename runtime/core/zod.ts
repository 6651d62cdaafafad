/**
 * Zod with the `.openapi()` extension applied once, for every schema in the service.
 */
// The `.openapi()` method's type is a module augmentation in the extension's declarations: the
// reference is kept in the compiled zod.d.ts, so that code compiled against the package sees it.
/// <reference types="@asteasolutions/zod-to-openapi" preserve="true" />
import { z } from 'zod';
import { extendZodWithOpenApi } from '@asteasolutions/zod-to-openapi';

extendZodWithOpenApi(z);

export { z };
