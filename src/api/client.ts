/** A typed client of the HTTP API, for the CLI and the launcher. */
import type { JobDetail, JobSubmit, JobView, NodeView } from "./schemas.ts";

export class ApiClientError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly code: string,
    readonly field?: string,
  ) {
    super(message);
  }
}

export function unreachable(url: string, why: string): ApiClientError {
  return new ApiClientError(
    `cannot reach the controller at ${url} (${why}); is it running? Start a local cluster with 'ebb up', or point --controller / EBB_CONTROLLER at yours`,
    0,
    "unreachable",
  );
}

export class ApiClient {
  constructor(
    readonly url: string,
    readonly token: string,
  ) {}

  async request<T>(method: string, path: string, body?: unknown): Promise<T> {
    let res: Response;
    try {
      res = await fetch(`${this.url}${path}`, {
        method,
        headers: { Authorization: `Bearer ${this.token}`, ...(body === undefined ? {} : { "Content-Type": "application/json" }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    } catch (e) {
      throw unreachable(this.url, (e as Error).message);
    }
    const text = await res.text();
    let json: unknown;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      throw new ApiClientError(`the controller answered ${res.status} with a body that is not JSON`, res.status, "bad_response");
    }
    if (!res.ok) {
      const err = (json as { error?: { code?: string; message?: string; field?: string } } | undefined)?.error;
      throw new ApiClientError(err?.message ?? `HTTP ${res.status}`, res.status, err?.code ?? "http_error", err?.field);
    }
    return json as T;
  }

  submit(req: JobSubmit): Promise<{ id: number }> {
    return this.request("POST", "/v1/jobs", req);
  }
  /** GET /v1/jobs with its filters: states, limit, since/until (ISO), name, user, array. */
  jobs(query: { state?: string; limit?: number; since?: string; until?: string; name?: string; user?: string; array?: number } = {}): Promise<{ jobs: JobView[] }> {
    const qs = new URLSearchParams();
    for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== "") qs.set(k, String(v));
    const s = qs.toString();
    return this.request("GET", `/v1/jobs${s ? `?${s}` : ""}`);
  }
  /** A job, or task `task` of array `id`; with `wait`, once it has ended or after that many seconds. */
  job(id: number | string, task?: number, wait?: number): Promise<JobDetail> {
    return this.request("GET", `/v1/jobs/${id}${task === undefined ? "" : `_${task}`}${wait === undefined ? "" : `?wait=${wait}`}`);
  }
  /** Cancel a job, an array (all its tasks) or one task (`12_3`). */
  cancel(id: number | string): Promise<{ id: number; cancelled: boolean; jobs: number[] }> {
    return this.request("DELETE", `/v1/jobs/${id}`);
  }
  hold(id: number | string, release = false): Promise<{ id: number; jobs: number[] }> {
    return this.request("POST", `/v1/jobs/${id}/${release ? "release" : "hold"}`);
  }
  /** When and where a job would start (sbatch --test-only). */
  testOnly(req: JobSubmit): Promise<{ start: string | null; nodes: string[]; message: string }> {
    return this.request("POST", "/v1/jobs/test", req);
  }
  /** Drain a node (it takes no new work), or with `resume` make it schedulable again. */
  drain(node: string, opts: { resume?: boolean; reason?: string } = {}): Promise<{ node: string; drain: string | null }> {
    const path = `/v1/nodes/${encodeURIComponent(node)}/${opts.resume ? "resume" : "drain"}`;
    return this.request("POST", path, opts.reason === undefined ? undefined : { reason: opts.reason });
  }
  nodes(): Promise<{ nodes: NodeView[] }> {
    return this.request("GET", "/v1/nodes");
  }
  /** The WebSocket URL of a controller endpoint (e.g. /v1/launcher). */
  wsUrl(path: string): string {
    return `${this.url.replace(/^http/, "ws")}${path}`;
  }
}
