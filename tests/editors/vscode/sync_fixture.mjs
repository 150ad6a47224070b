// The other machine of the VS Code sync checks ("laptop"), driven through the command line as a person
// on that machine would: its own HOME and store, its own clone of a test repository (at another path
// than the editor's clone of it), and a bare folder both stores sync with. The editor is the second
// machine: its workspace folder is `editorClone`, its store the e2e's own.
import { execFileSync, spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";

const AUTHOR = {
  GIT_AUTHOR_NAME: "Test", GIT_AUTHOR_EMAIL: "test@example.invalid",
  GIT_COMMITTER_NAME: "Test", GIT_COMMITTER_EMAIL: "test@example.invalid",
};

/** A git command for the fixture's repositories (never the person's configuration). */
function git(cwd, env, ...args) {
  return execFileSync("git", args, { cwd, env: { ...env, ...AUTHOR }, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], timeout: 60000 });
}

/**
 * Makes `base/`: the origin repository (bare, one commit), the laptop's clone at `laptop/src/api`, the
 * editor's clone at `desk/code/api`, the bare `memory-remote.git`, and the laptop's home with its store.
 * `python` runs `-m kin_memory`; `env` is the environment to start from (HOME and the store replaced).
 */
export function makeSyncFixture(base, python, env) {
  const home = path.join(base, "home-laptop");
  const store = path.join(home, ".kin", "memory");
  fs.mkdirSync(store, { recursive: true });
  const gitEnv = { ...env, HOME: home, GIT_CONFIG_NOSYSTEM: "1" };
  delete gitEnv.KIN_MEMORY_DIR;
  const origin = path.join(base, "origin", "api.git");
  fs.mkdirSync(origin, { recursive: true });
  git(origin, gitEnv, "init", "-q", "--bare", "-b", "main");
  const seed = path.join(base, "seed");
  fs.mkdirSync(seed);
  git(seed, gitEnv, "init", "-q", "-b", "main");
  fs.writeFileSync(path.join(seed, "README.md"), "# api\n");
  git(seed, gitEnv, "add", "README.md");
  git(seed, gitEnv, "commit", "-q", "-m", "first");
  git(seed, gitEnv, "push", "-q", origin, "main");
  fs.rmSync(seed, { recursive: true, force: true });
  const clone = (where) => {
    fs.mkdirSync(path.dirname(where), { recursive: true });
    git(path.dirname(where), gitEnv, "clone", "-q", origin, path.basename(where));
    return fs.realpathSync(where);
  };
  const laptopClone = clone(path.join(base, "laptop", "src", "api"));
  const editorClone = clone(path.join(base, "desk", "code", "api"));
  const remote = path.join(base, "memory-remote.git");
  fs.mkdirSync(remote);
  git(remote, gitEnv, "init", "-q", "--bare", "-b", "main");

  const laptopEnv = {
    ...gitEnv, KIN_MEMORY_DIR: store, XDG_CONFIG_HOME: path.join(home, ".config"), XDG_DATA_HOME: path.join(home, ".local/share"),
    XDG_CACHE_HOME: path.join(home, ".cache"), XDG_STATE_HOME: path.join(home, ".local/state"),
  };
  /**
   * `kin-memory ARGS` on the laptop, from inside its clone (the workspace its writes are stamped with);
   * its output. Exit status 1 is an answer too: a sync that knows of a conflict says so with it.
   */
  const run = (...args) => {
    const done = spawnSync(python, ["-m", "kin_memory", ...args], {
      cwd: laptopClone, env: laptopEnv, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], timeout: 120000,
    });
    if (done.status !== 0 && done.status !== 1) {
      throw new Error(`kin-memory ${args[0]} on the laptop exited with ${done.status}: ${(done.stderr || done.stdout || String(done.error)).trim()}`);
    }
    return done.stdout;
  };
  const laptop = {
    store,
    run,
    tool: (call) => run("tool", JSON.stringify(call)),
    sync: () => run("sync"),
  };
  return { laptop, laptopClone, editorClone, remote };
}

/** A memory's text: a project fact with its workspace stamp. */
export function fact(title, body, workspace) {
  return `---\ncategory: project-fact\nworkspace: ${workspace}\n---\n\n# ${title}\n\n${body}\n`;
}

/** Files under `root` (its .git and index folders aside) holding a git conflict marker. */
export function filesWithMarkers(root) {
  const found = [];
  const walk = (d) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) {
        if (e.name !== ".git" && e.name !== ".kin-index") walk(p);
      } else if (e.isFile()) {
        const text = fs.readFileSync(p).toString("utf8");
        if (text.includes("<<<<<<<") || text.includes(">>>>>>>")) found.push(p);
      }
    }
  };
  walk(root);
  return found;
}
