// The custom code of tasks: two actions and two endpoints.
import { ApiException, type HookContext } from '@svcgen/runtime';
import type { TaskRecord } from '../../expected/resources/tasks/queries';

/** POST /tasks/{pk}/complete/: a task is completed once. */
export async function completeTask({ db, instance }: HookContext<{ instance: TaskRecord }>): Promise<{ done: boolean }> {
  if (instance.done) throw new ApiException({ done: 'Task is already done' }, 409);
  await db('tasks').where('id', instance.id).update({ done: true });
  return { done: true };
}

/** GET /tasks/{pk}/priority/ reads the priority; PUT raises it by one. */
export async function taskPriority({ req, db, instance }: HookContext<{ instance: TaskRecord }>): Promise<{ priority: number }> {
  if (req.method === 'GET') return { priority: instance.priority };
  await db('tasks').where('id', instance.id).update({ priority: instance.priority + 1 });
  return { priority: instance.priority + 1 };
}

/** GET /tasks/stats/: counts by state. */
export async function taskStats({ db }: HookContext): Promise<{ done: number; open: number }> {
  const rows: { done: unknown; n: unknown }[] = await db('tasks').select('done').count({ n: '*' }).groupBy('done');
  const count = (done: boolean) => Number(rows.find((r) => Boolean(r.done) === done)?.n ?? 0);
  return { done: count(true), open: count(false) };
}

/** POST /tasks/bulk/: one task per title. */
export async function createTasks({ db, body }: HookContext<{ body: { titles: unknown[] } }>): Promise<{ created: number }> {
  const titles = body.titles.map(String);
  if (titles.length) await db('tasks').insert(titles.map((title) => ({ title })));
  return { created: titles.length };
}
