/**
 * The watch of `svcgen dev`: every change under a folder, however it is saved. Node's
 * `fs.watch(dir, {recursive: true})` on Linux (Node 20) watches each file it found, so a file saved
 * by rename (an editor's atomic save, `sed -i`: a new file moved over the old one) is not watched
 * any more, and its later changes are never noticed. Here each folder is watched on its own, not
 * recursively: a folder's watch reports what happens to the names in it (written, created, renamed
 * over, deleted), whatever inode a name holds, and the folders are listed again after every event,
 * so a new folder is watched too and a removed one forgotten.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

export interface TreeWatch {
  close(): void;
}

/**
 * Calls `onChange` with the path (absolute) of every file or folder changed under `root`, except
 * those under a folder `ignore` accepts (the output folder when it lies inside the specs).
 */
export function watchTree(root: string, onChange: (file: string) => void, ignore: (dir: string) => boolean = () => false): TreeWatch {
  const watchers = new Map<string, fs.FSWatcher>();
  let closed = false;

  function folders(dir: string, out: string[] = []): string[] {
    if (ignore(dir)) return out;
    out.push(dir);
    let entries: fs.Dirent[] = [];
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true });
    } catch {
      return out;
    }
    for (const e of entries)
      if (e.isDirectory() && !e.name.startsWith('.') && e.name !== 'node_modules') folders(path.join(dir, e.name), out);
    return out;
  }

  /** Watches every folder there is now, and stops watching those that are gone. */
  function sync(): void {
    if (closed) return;
    const now = new Set(folders(root));
    for (const [dir, w] of watchers) {
      if (!now.has(dir)) {
        w.close();
        watchers.delete(dir);
      }
    }
    for (const dir of now) {
      if (watchers.has(dir)) continue;
      try {
        const w = fs.watch(dir, (_event, name) => {
          const file = name ? path.join(dir, name.toString()) : dir;
          // A folder created, renamed or removed changes what is watched.
          sync();
          onChange(file);
        });
        // A folder removed under its watch ends it with an error on some systems: forget it.
        w.on('error', () => {
          w.close();
          if (watchers.get(dir) === w) watchers.delete(dir);
        });
        watchers.set(dir, w);
      } catch {
        // Gone between the listing and the watch.
      }
    }
  }

  sync();
  return {
    close() {
      closed = true;
      for (const w of watchers.values()) w.close();
      watchers.clear();
    },
  };
}
