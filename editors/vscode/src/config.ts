// Pure mapping from the extension's settings to how argus-lsp is started and
// configured. Kept free of the `vscode` module so that it can be unit-tested
// under plain Node.
import { isAbsolute, join } from "path";

export const TARGETS = ["sm_80", "sm_90", "sm_90a"] as const;
export type Target = (typeof TARGETS)[number];
export const DEFAULT_TARGET: Target = "sm_90";

/** The `argus.*` settings, as read from the workspace configuration. */
export interface ArgusSettings {
  serverPath?: unknown;
  /** The first workspace folder, for `${workspaceFolder}` and relative paths like `build/argus-lsp`. */
  workspaceFolder?: string;
  serverArgs?: unknown;
  target?: unknown;
  defines?: unknown;
}

export interface ServerCommand {
  command: string;
  args: string[];
}

/** What the server reads from `workspace/didChangeConfiguration` (`settings.argus`). */
export interface ServerSettings {
  argus: {
    /** The architecture; argus-lsp reads `arch`, `target` is kept for clarity. */
    arch: Target;
    target: Target;
    /** `-D NAME=VALUE` values, as strings. */
    defines: Record<string, string>;
  };
}

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** The executable and arguments to start the server with, over stdio. */
export function serverCommand(settings: ArgusSettings): ServerCommand {
  let path = typeof settings.serverPath === "string" && settings.serverPath.trim() !== ""
    ? settings.serverPath.trim()
    : "argus-lsp";
  const folder = settings.workspaceFolder;
  if (folder) {
    path = path.split("${workspaceFolder}").join(folder);
    // A bare name is looked up on PATH; a relative path is relative to the workspace.
    if (path.includes("/") && !isAbsolute(path)) path = join(folder, path);
  }
  const args = Array.isArray(settings.serverArgs)
    ? settings.serverArgs.filter((a): a is string => typeof a === "string" && a !== "")
    : [];
  return { command: path, args };
}

export function normalizeTarget(value: unknown): Target {
  return (TARGETS as readonly unknown[]).includes(value) ? (value as Target) : DEFAULT_TARGET;
}

/**
 * Defines are accepted as an object (`{"BM": 64}`) or as `-D`-style strings
 * (`["BM=64"]`); names that are not identifiers and values that are not
 * scalars are dropped rather than sent to the server.
 */
export function normalizeDefines(value: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  const put = (name: string, v: unknown) => {
    if (!NAME.test(name)) return;
    if (typeof v === "string" || typeof v === "number" || typeof v === "boolean") out[name] = String(v);
  };
  if (Array.isArray(value)) {
    for (const item of value) {
      if (typeof item !== "string") continue;
      const eq = item.indexOf("=");
      if (eq > 0) put(item.slice(0, eq).trim(), item.slice(eq + 1).trim());
    }
  } else if (value !== null && typeof value === "object") {
    for (const [name, v] of Object.entries(value as Record<string, unknown>)) put(name, v);
  }
  return out;
}

/** The payload of `workspace/didChangeConfiguration` (also sent as initializationOptions' settings). */
export function serverSettings(settings: ArgusSettings): ServerSettings {
  const target = normalizeTarget(settings.target);
  return { argus: { arch: target, target, defines: normalizeDefines(settings.defines) } };
}

/** The same options as `argusc` flags, for display and logs: `--arch=sm_90 -D BM=64`. */
export function compilerFlags(settings: ArgusSettings): string[] {
  const s = serverSettings(settings).argus;
  const flags = [`--arch=${s.arch}`];
  for (const [name, value] of Object.entries(s.defines)) flags.push("-D", `${name}=${value}`);
  return flags;
}
