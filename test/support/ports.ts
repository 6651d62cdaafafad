/**
 * A TCP port free on 127.0.0.1 now, for a process a test starts that must be told its port (a
 * service, a pooler, a proxy, a database cluster): the port the system gave a listener, closed again.
 */
import * as net from 'node:net';

export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}
