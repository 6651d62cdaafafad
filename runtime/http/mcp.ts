/**
 * The MCP endpoint (`SVC_MCP`): the service's operations as tools of the Model Context Protocol,
 * served with the protocol's streamable HTTP transport at `{basePath}/mcp`.
 *
 * - The tools are read once, at start, off the OpenAPI document the service serves: one per
 *   documented operation, named by its operation id, described by its summary, taking its path,
 *   query and header parameters as arguments of those names and its request body as `body`.
 * - A tool call is an HTTP request to the service itself, made in process: it walks the same
 *   Express application as any other request (authentication with the MCP request's
 *   `Authorization`, permissions, rate limits keyed by the same client address, validation, hooks,
 *   the error format, the request log), and its result is the response's status and JSON body.
 * - The transport is stateless: every POST carries one JSON-RPC message and is answered on its own,
 *   so any process of any instance can take any message, and no session outlives its request. A
 *   batch (a JSON array) is refused: one POST is at most one tool call.
 * - `tools/list` follows `SVC_DOCS`, as the OpenAPI document it describes: off, it does not exist;
 *   staff, it answers whoever may read the document.
 */
import { IncomingMessage, ServerResponse, type IncomingHttpHeaders, type OutgoingHttpHeaders } from 'node:http';
import type { Socket } from 'node:net';
import { Duplex } from 'node:stream';
import type { TLSSocket } from 'node:tls';
import type { Request, Response } from 'express';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import { requireOptional } from '../core/optional-packages';
import { ConfigurationError } from '../core/settings';
import { LOC } from '../validation/validate';
import { openApiPath, type Method, type Route } from './routes';
import { sendJson } from './send';

/** The path of the endpoint below the base path. */
export const MCP_PATH = '/mcp';

/** The argument that holds an operation's request body. */
const BODY_ARGUMENT = 'body';

/** One tool and the HTTP request its calls become. */
export interface McpTool {
  tool: Tool;
  method: Method;
  /** The OpenAPI path with the base path, `{name}` for each path parameter. */
  path: string;
  /** The arguments that go to the path, the headers and the query string; any other but `body` goes to the query string too. */
  pathParameters: readonly string[];
  headerParameters: readonly string[];
  /** Query parameters whose list the document writes `a,b` (`style: form`, `explode: false`: `?expand=`). */
  commaParameters: readonly string[];
  body: boolean;
}

type JsonObject = Record<string, unknown>;

interface OpenApiParameter {
  name: string;
  in: 'path' | 'query' | 'header';
  required?: boolean;
  description?: string;
  style?: string;
  explode?: boolean;
  schema: JsonObject;
}

interface OpenApiOperation {
  operationId: string;
  summary?: string;
  description?: string;
  parameters?: OpenApiParameter[];
  requestBody?: { required?: boolean; content: Record<string, { schema: JsonObject }> };
}

interface OpenApiDocument {
  paths: Record<string, Record<string, OpenApiOperation>>;
  components: { schemas: Record<string, JsonObject> };
}

const COMPONENT_REF = '#/components/schemas/';

/** `value` with every reference to a component rewritten to the tool schema's `$defs`; `found` collects the names. */
function localRefs(value: unknown, found: Set<string>): unknown {
  if (Array.isArray(value)) return value.map((v) => localRefs(v, found));
  if (value === null || typeof value !== 'object') return value;
  const out: JsonObject = {};
  for (const [key, v] of Object.entries(value)) {
    if (key === '$ref' && typeof v === 'string' && v.startsWith(COMPONENT_REF)) {
      found.add(v.slice(COMPONENT_REF.length));
      out[key] = `#/$defs/${v.slice(COMPONENT_REF.length)}`;
    } else out[key] = localRefs(v, found);
  }
  return out;
}

/** The JSON Schema of a tool's arguments: one property per parameter, `body` for the request body, components as `$defs`. */
function inputSchemaOf(operation: OpenApiOperation, components: Record<string, JsonObject>): Tool['inputSchema'] {
  const properties: JsonObject = {};
  const required: string[] = [];
  for (const p of operation.parameters ?? []) {
    properties[p.name] = p.description ? { ...p.schema, description: p.description } : p.schema;
    if (p.required) required.push(p.name);
  }
  const body = operation.requestBody?.content['application/json']?.schema;
  if (body) {
    if (BODY_ARGUMENT in properties) {
      throw new ConfigurationError(
        `SVC_MCP: the operation ${operation.operationId} has a parameter named "${BODY_ARGUMENT}", the argument that holds its request body`,
      );
    }
    properties[BODY_ARGUMENT] = { ...body, description: 'The request body (JSON).' };
    if (operation.requestBody?.required) required.push(BODY_ARGUMENT);
  }
  const names = new Set<string>();
  const schema = localRefs({ type: 'object', properties, ...(required.length ? { required } : {}) }, names) as Tool['inputSchema'];
  // The components the properties name, and those the components name in turn.
  const defs: JsonObject = {};
  for (const name of names) {
    if (name in defs) continue;
    defs[name] = localRefs(components[name], names);
  }
  return names.size ? { ...schema, $defs: defs } : schema;
}

/**
 * The tools of the documented operations, in the order of `routes` (the order they are served in),
 * read off `document`, the OpenAPI document the service serves. The health routes are not operations.
 */
export function mcpTools(document: unknown, routes: readonly Route[], basePath: string): McpTool[] {
  const { paths, components } = document as OpenApiDocument;
  const tools: McpTool[] = [];
  for (const route of routes) {
    if (!route.doc || route.doc.standalone) continue;
    const path = basePath + openApiPath(route.path);
    const operation = paths[path]?.[route.method];
    if (!operation) continue;
    const parameters = operation.parameters ?? [];
    const http = `${route.method.toUpperCase()} ${path}`;
    tools.push({
      tool: {
        name: operation.operationId,
        ...(route.doc.title || operation.summary ? { title: route.doc.title || operation.summary } : {}),
        description: [operation.summary, operation.description, `HTTP: ${http}`].filter(Boolean).join('\n\n'),
        inputSchema: inputSchemaOf(operation, components.schemas),
        annotations: {
          readOnlyHint: route.method === 'get',
          destructiveHint: route.method === 'delete',
          idempotentHint: route.method === 'get' || route.method === 'put' || route.method === 'delete',
          openWorldHint: false,
        },
      },
      method: route.method,
      path,
      pathParameters: parameters.filter((p) => p.in === 'path').map((p) => p.name),
      headerParameters: parameters.filter((p) => p.in === 'header').map((p) => p.name),
      commaParameters: parameters.filter((p) => p.in === 'query' && p.explode === false).map((p) => p.name),
      body: operation.requestBody !== undefined,
    });
  }
  return tools;
}

/** The HTTP request of one tool call. */
export interface ToolRequest {
  method: Method;
  url: string;
  headers: Record<string, string>;
  /** The JSON body, if the call gave one. */
  body?: unknown;
}

/** The answer to a tool call: the response's status, the headers a caller acts on, and its body (JSON, text or null). */
export interface ToolResponse {
  status: number;
  headers: Record<string, string>;
  body: unknown;
}

/** A query string value as a form would send it: arrays as repeated keys, objects as JSON. */
function queryValues(value: unknown): string[] {
  if (value === undefined || value === null) return [];
  if (Array.isArray(value)) return value.flatMap(queryValues);
  return [typeof value === 'object' ? JSON.stringify(value) : String(value)];
}

/**
 * The request a call of `tool` with `args` becomes, or the 422 of the path parameters it lacks
 * (without them there is no URL to request), in the shape of every other validation error.
 */
export function toolRequest(tool: McpTool, args: Readonly<Record<string, unknown>>): ToolRequest | ToolResponse {
  const missing = tool.pathParameters.filter((name) => args[name] === undefined || args[name] === null);
  if (missing.length) {
    const detail = missing.map((name) => ({ type: 'missing', loc: [...LOC.path, name], msg: 'Field required' }));
    return { status: 422, headers: {}, body: { detail } };
  }
  let path = tool.path;
  for (const name of tool.pathParameters) path = path.replace(`{${name}}`, encodeURIComponent(String(args[name])));
  const headers: Record<string, string> = {};
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(args)) {
    if (tool.pathParameters.includes(name) || (tool.body && name === BODY_ARGUMENT)) continue;
    if (tool.headerParameters.includes(name)) {
      if (value !== undefined && value !== null) headers[name.toLowerCase()] = String(value);
    } else if (tool.commaParameters.includes(name) && Array.isArray(value)) {
      if (value.length) query.append(name, value.map(String).join(','));
    } else for (const v of queryValues(value)) query.append(name, v);
  }
  const search = query.toString();
  const body = tool.body ? args[BODY_ARGUMENT] : undefined;
  return { method: tool.method, url: search ? `${path}?${search}` : path, headers, ...(body === undefined ? {} : { body }) };
}

/** The result of a tool call: the status and body as structured content, the same as text; an error status is an error. */
export function toolResult(response: ToolResponse): CallToolResult {
  const content = {
    status: response.status,
    ...(Object.keys(response.headers).length ? { headers: response.headers } : {}),
    body: response.body,
  };
  return { content: [{ type: 'text', text: JSON.stringify(content) }], structuredContent: content, isError: response.status >= 400 };
}

/**
 * The headers of the MCP request a tool call's request does not carry: those that describe the MCP
 * message itself (its body, framing and the protocol's own), and the conditions of a request, which
 * are a tool's arguments. Every other header goes along: `Authorization`, and whatever else an
 * authenticator reads (an API key, `X-Forwarded-For` behind a trusted proxy, `X-Commit-Position`).
 */
const MESSAGE_HEADERS: ReadonlySet<string> = new Set([
  'accept',
  'accept-encoding',
  'connection',
  'content-encoding',
  'content-length',
  'content-type',
  'expect',
  'if-match',
  'if-modified-since',
  'if-none-match',
  'if-unmodified-since',
  'keep-alive',
  'last-event-id',
  'mcp-protocol-version',
  'mcp-session-id',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

/** The response headers a tool result passes on. */
const RESULT_HEADERS = ['location', 'etag', 'retry-after'];

/**
 * The connection of an in-process request: the peer and local addresses of the MCP request's
 * connection (what `req.ip`, and so the client address of rate limits, reads), and a sink for the
 * bytes of the response, which are read as they are written instead.
 */
class InProcessSocket extends Duplex {
  readonly remoteAddress: string | undefined;
  readonly remotePort: number | undefined;
  readonly localAddress: string | undefined;
  readonly localPort: number | undefined;
  readonly encrypted: boolean | undefined;

  constructor(of: Socket) {
    super();
    this.remoteAddress = of.remoteAddress;
    this.remotePort = of.remotePort;
    this.localAddress = of.localAddress;
    this.localPort = of.localPort;
    this.encrypted = (of as TLSSocket).encrypted;
  }

  override _read(): void {}

  override _write(_chunk: unknown, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    callback();
  }
}

/** Handles a request as Express applications do: `app(req, res)`. */
export type RequestListener = (req: IncomingMessage, res: ServerResponse) => void;

/**
 * Sends `request` through `app` in process, as if it came on the connection of `from` with the
 * headers of `from` (but those of the MCP message), and resolves with the response once it is finished.
 */
export function requestInProcess(app: RequestListener, from: Request, request: ToolRequest): Promise<ToolResponse> {
  const socket = new InProcessSocket(from.socket);
  const payload = request.body === undefined ? undefined : Buffer.from(JSON.stringify(request.body));
  const headers: IncomingHttpHeaders = { accept: 'application/json' };
  for (const [name, value] of Object.entries(from.headers)) if (value !== undefined && !MESSAGE_HEADERS.has(name)) headers[name] = value;
  Object.assign(headers, request.headers);
  if (payload) Object.assign(headers, { 'content-type': 'application/json', 'content-length': String(payload.length) });

  const req = new IncomingMessage(socket as unknown as Socket);
  req.method = request.method.toUpperCase();
  req.url = request.url;
  req.httpVersion = '1.1';
  req.httpVersionMajor = 1;
  req.httpVersionMinor = 1;
  req.headers = headers;
  req.rawHeaders = Object.entries(headers).flatMap(([name, value]) =>
    Array.isArray(value) ? value.flatMap((v) => [name, v]) : [name, String(value)],
  );
  if (payload) req.push(payload);
  req.push(null);
  req.complete = true;

  const res = new ServerResponse(req);
  // Its connection, as Node's server gives each response one: the response writes its head and body
  // to it and emits 'finish'; destroying it afterwards makes the response emit 'close'.
  res.assignSocket(socket as unknown as Socket);
  const chunks: Buffer[] = [];
  const collect = (chunk: unknown, encoding: unknown) => {
    if (typeof chunk === 'string') chunks.push(Buffer.from(chunk, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8'));
    else if (chunk instanceof Uint8Array) chunks.push(Buffer.from(chunk));
  };
  const write = res.write;
  const end = res.end;
  res.write = function (this: ServerResponse, chunk: unknown, ...rest: unknown[]) {
    collect(chunk, rest[0]);
    return (write as (...args: unknown[]) => boolean).call(this, chunk, ...rest);
  } as typeof res.write;
  res.end = function (this: ServerResponse, chunk?: unknown, ...rest: unknown[]) {
    collect(chunk, rest[0]);
    return (end as (...args: unknown[]) => ServerResponse).call(this, chunk, ...rest);
  } as typeof res.end;

  return new Promise((resolve, reject) => {
    res.once('finish', () => {
      // The connection closes after its one response, as Node's would: the response's 'close' follows.
      socket.destroy();
      resolve({
        status: res.statusCode,
        headers: resultHeaders(res.getHeaders()),
        body: bodyOf(res.getHeader('content-type'), Buffer.concat(chunks)),
      });
    });
    res.once('error', reject);
    app(req, res);
  });
}

function resultHeaders(headers: OutgoingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of RESULT_HEADERS) if (headers[name] !== undefined) out[name] = String(headers[name]);
  return out;
}

/** A response body: parsed when it is JSON, the text otherwise, null when there is none. */
function bodyOf(contentType: unknown, bytes: Buffer): unknown {
  if (bytes.length === 0) return null;
  const text = bytes.toString('utf8');
  if (typeof contentType === 'string' && /^application\/([\w.+-]+\+)?json\b/i.test(contentType)) {
    try {
      return JSON.parse(text);
    } catch {
      return text;
    }
  }
  return text;
}

export interface McpEndpointOptions {
  /** The server's name and version in the MCP handshake: the service's title and version. */
  name: string;
  version: string;
  tools: readonly McpTool[];
  /** Sends a tool call's request through the service, on behalf of the MCP request `from`. */
  send(from: Request, request: ToolRequest): Promise<ToolResponse>;
  /**
   * Who may list the tools (`SVC_DOCS`, which says who may read the OpenAPI document they are read
   * off): `public` anyone; `off` no one (`tools/list` is a method the server does not have);
   * `staff` a caller the document's own route lets read it, asked with `docsRequest`.
   */
  docs: 'public' | 'off' | 'staff';
  /** The request of the OpenAPI document (`GET {base}/openapi.json`), whose answer says who may list the tools with `staff`. */
  docsRequest: ToolRequest;
}

/**
 * The JSON-RPC error of a batch (a JSON array of messages): the endpoint takes one message per
 * POST, as the MCP transport has since its 2025-06-18 revision. The SDK's code for a request it
 * refuses (`-32600`, Invalid Request) with the HTTP 400 the SDK answers it with, and no id (a
 * batch has none of its own).
 */
export const BATCH_REFUSED = {
  jsonrpc: '2.0',
  error: { code: -32600, message: 'Invalid Request: a POST carries one JSON-RPC message; batches are not supported' },
  id: null,
} as const;

/** Whether a JSON-RPC message is a `tools/list` request. */
function listsTools(message: unknown): boolean {
  return message !== null && typeof message === 'object' && (message as { method?: unknown }).method === 'tools/list';
}

/**
 * The endpoint's route: `POST {basePath}/mcp`, each POST one JSON-RPC message answered as JSON. GET
 * (a stream of server-initiated messages) and DELETE (the end of a session) mean nothing without
 * sessions: they are the 405 of every route, which MCP clients expect of a stateless server.
 *
 * A batch is refused (400, `BATCH_REFUSED`) before any of its messages is read: one POST is one
 * tool call, counted once by rate limits and bounded by one response. With `docs` `staff`, a
 * `tools/list` from a caller the OpenAPI document refuses is answered that refusal, its HTTP status
 * and body (401 or 403); with `off` the method does not exist (JSON-RPC `-32601`).
 */
export function mcpRoute(options: McpEndpointOptions): Route {
  const { McpServer, StreamableHTTPServerTransport, CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError } = sdk();
  const byName = new Map(options.tools.map((t) => [t.tool.name, t]));
  const tools = options.tools.map((t) => t.tool);
  const handler = async (req: Request, res: Response) => {
    if (Array.isArray(req.body)) {
      sendJson(res, 400, BATCH_REFUSED);
      return;
    }
    if (options.docs === 'staff' && listsTools(req.body)) {
      const docs = await options.send(req, options.docsRequest);
      if (docs.status !== 200) {
        for (const [name, value] of Object.entries(docs.headers)) res.setHeader(name, value);
        sendJson(res, docs.status, docs.body);
        return;
      }
    }
    const server = new McpServer({ name: options.name, version: options.version }, { capabilities: { tools: { listChanged: false } } });
    server.server.setRequestHandler(ListToolsRequestSchema, () => {
      // The SDK's own answer to a method it does not serve.
      if (options.docs === 'off') throw Object.assign(new Error('Method not found'), { code: ErrorCode.MethodNotFound });
      return { tools };
    });
    server.server.setRequestHandler(CallToolRequestSchema, async ({ params }) => {
      const tool = byName.get(params.name);
      if (!tool) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${params.name}`);
      const request = toolRequest(tool, params.arguments ?? {});
      return toolResult('url' in request ? await options.send(req, request) : request);
    });
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.once('close', () => void server.close());
    await server.connect(transport);
    await transport.handleRequest(req as unknown as IncomingMessage, res, req.body);
  };
  return { method: 'post', path: MCP_PATH, handlers: [handler] };
}

/**
 * The SDK, loaded when the endpoint is made: a service with `SVC_MCP` off never loads it (nor the
 * web framework and validators it brings), so it costs that service nothing at start or per request.
 */
const MCP_NEEDS = 'SVC_MCP is on, the MCP endpoint';

function sdk() {
  return {
    ...requireOptional<typeof import('@modelcontextprotocol/sdk/server/mcp.js')>('@modelcontextprotocol/sdk/server/mcp.js', MCP_NEEDS),
    ...requireOptional<typeof import('@modelcontextprotocol/sdk/server/streamableHttp.js')>(
      '@modelcontextprotocol/sdk/server/streamableHttp.js',
      MCP_NEEDS,
    ),
    ...requireOptional<typeof import('@modelcontextprotocol/sdk/types.js')>('@modelcontextprotocol/sdk/types.js', MCP_NEEDS),
  };
}
