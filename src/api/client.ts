/** A typed client of the HTTP API, for the CLI and the launcher. */
import type { z } from "zod";
import type { JobDetail, JobSubmit, JobView, NodeView, PartitionView, PlanView, PrioritySettings, PriorityView, ShareRowView, StartsView, UsageView } from "./schemas.ts";
import { clientTls, isCertificateError } from "../util/tls.ts";

/** The cluster CA a client trusts: its PEM text and where it came from (for messages). */
export interface TrustedCa {
  pem: string;
  path: string;
}

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

/** Why a connection failed, with what to do when TLS is the cause. */
export function connectionFailure(url: string, reason: string, ca: TrustedCa | undefined): ApiClientError {
  const why = reason.replace(/\s*For more information, pass `verbose: true`.*$/s, "");
  if (url.startsWith("https:") && isCertificateError(why)) {
    return new ApiClientError(
      ca
        ? `the controller at ${url} presented a certificate the cluster CA in ${ca.path} did not sign (${why}); use the ca.pem of that cluster's state dir (--ca FILE or EBB_CA)`
        : `the controller at ${url} uses TLS and its certificate is not trusted (${why}); give the cluster's CA with --ca FILE or EBB_CA (ebb up --tls writes it to STATE_DIR/ca.pem)`,
      0,
      "untrusted",
    );
  }
  if (url.startsWith("http:") && /ECONNRESET|closed unexpectedly|Connection ended/i.test(why))
    return unreachable(url, `${why}; if the controller uses TLS (ebb up --tls), its URL starts with https://`);
  return unreachable(url, why);
}

/**
 * The controller's HTTP server refused a request line or headers as too large (Bun's limit is
 * 16 KiB), before any route saw it: say which part of the URL was long, and what to do.
 */
function tooLarge(method: string, path: string, status: number): ApiClientError {
  const url = new URL(path, "http://x");
  const longest = [...url.searchParams].sort(([, a], [, b]) => b.length - a.length)[0];
  const what = longest && longest[1].length > 1024 ? `its query parameter ${longest[0]} is ${longest[1].length} characters long` : `its URL is ${path.length} characters long`;
  return new ApiClientError(
    `the controller refused ${method} ${url.pathname} as too large (HTTP ${status}: the request line and headers may take 16 KiB; ${what}); narrow the filter, or give fewer or shorter values`,
    status,
    "request_too_large",
    longest?.[0],
  );
}

/** The filters of GET /v1/jobs. */
export type JobQuery = { state?: string; since?: string; until?: string; name?: string; user?: string; partition?: string; array?: number; id?: string };

/** Jobs per GET /v1/jobs page when a client lists them all (the API's default page). */
export const JOB_PAGE = 1000;

export class ApiClient {
  constructor(
    readonly url: string,
    readonly token: string,
    /** With an https URL: the CA the controller's certificate must be signed by. */
    readonly ca?: TrustedCa,
  ) {}

  /** Bun's `tls` option for connections to the controller (fetch and WebSocket). */
  get tls() {
    return this.ca ? clientTls(this.ca.pem, "controller") : undefined;
  }

  async request<T>(method: string, path: string, body?: unknown): Promise<T> {
    let res: Response;
    try {
      res = await fetch(`${this.url}${path}`, {
        method,
        headers: { Authorization: `Bearer ${this.token}`, ...(body === undefined ? {} : { "Content-Type": "application/json" }) },
        body: body === undefined ? undefined : JSON.stringify(body),
        tls: this.tls,
      });
    } catch (e) {
      const err = e as Error & { code?: string };
      throw connectionFailure(this.url, err.code && !err.message.includes(err.code) ? `${err.code}: ${err.message}` : err.message, this.ca);
    }
    const text = await res.text();
    let json: unknown;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      throw new ApiClientError(`the controller answered ${res.status} with a body that is not JSON`, res.status, "bad_response");
    }
    if (res.status === 431 || res.status === 414) throw tooLarge(method, path, res.status);
    if (!res.ok) {
      const err = (json as { error?: { code?: string; message?: string; field?: string } } | undefined)?.error;
      throw new ApiClientError(err?.message ?? `HTTP ${res.status}`, res.status, err?.code ?? "http_error", err?.field);
    }
    return json as T;
  }

  submit(req: JobSubmit): Promise<{ id: number }> {
    return this.request("POST", "/v1/jobs", req);
  }
  /** GET /v1/jobs with its filters: states, limit, since/until (ISO), name, user, partition, array, before (a page's `next`). */
  jobs(query: JobQuery & { limit?: number; before?: number } = {}): Promise<{ jobs: JobView[]; next?: number }> {
    const qs = new URLSearchParams();
    for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== "") qs.set(k, String(v));
    const s = qs.toString();
    return this.request("GET", `/v1/jobs${s ? `?${s}` : ""}`);
  }
  /** Every job GET /v1/jobs lists for `query` (at most the newest `max`), a page of JOB_PAGE at a time; in id order. */
  async allJobs(query: JobQuery = {}, max = Infinity): Promise<JobView[]> {
    const pages: JobView[][] = [];
    let got = 0;
    let before: number | undefined;
    do {
      const page = await this.jobs({ ...query, limit: Math.min(JOB_PAGE, max - got), before });
      pages.push(page.jobs);
      got += page.jobs.length;
      before = page.next;
    } while (before !== undefined && got < max);
    return pages.reverse().flat();
  }
  /** GET /v1/starts: when pending jobs are expected to start (squeue --start). */
  starts(): Promise<StartsView> {
    return this.request("GET", "/v1/starts");
  }
  /** GET /v1/usage: each user's jobs, node- and core-seconds over the window (ISO times). */
  usage(query: { since: string; until?: string; user?: string }): Promise<UsageView> {
    const qs = new URLSearchParams();
    for (const [k, v] of Object.entries(query)) if (v !== undefined) qs.set(k, v);
    return this.request("GET", `/v1/usage?${qs}`);
  }
  /** GET /v1/plans: the newest `limit` scheduling plans (the caller's jobs' items), newest first; `job`: only its items. */
  plans(query: { job?: number; limit?: number } = {}): Promise<{ plans: PlanView[] }> {
    const qs = new URLSearchParams();
    for (const [k, v] of Object.entries(query)) if (v !== undefined) qs.set(k, String(v));
    const s = qs.toString();
    return this.request("GET", `/v1/plans${s ? `?${s}` : ""}`);
  }
  /** A job, or task `task` of array `id`; with `wait`, once it has ended or after that many seconds. */
  job(id: number | string, task?: number, wait?: number): Promise<JobDetail> {
    return this.request("GET", `/v1/jobs/${id}${task === undefined ? "" : `_${task}`}${wait === undefined ? "" : `?wait=${wait}`}`);
  }
  /** Cancel a job, an array (all its tasks) or one task (`12_3`). */
  cancel(id: number | string): Promise<{ id: number; cancelled: boolean; jobs: number[] }> {
    return this.request("DELETE", `/v1/jobs/${id}`);
  }
  /** The controller's liveness, version and cluster name (no token needed). */
  health(): Promise<{ ok: true; version: string; clusterName: string }> {
    return this.request("GET", "/v1/health");
  }
  /** End a running batch job with an exit code (salloc's end). */
  complete(id: number | string, exitCode: number): Promise<{ id: number; jobs: number[] }> {
    return this.request("POST", `/v1/jobs/${id}/complete`, { exitCode });
  }
  /** Change a job's name, time limit, dependency, node count or partition (scontrol update); the fields changed. */
  update(id: number | string, req: { name?: string; timeLimit?: number | string; dependency?: string; minNodes?: number; maxNodes?: number; partition?: string }): Promise<{ id: number; changed: string[] }> {
    return this.request("PATCH", `/v1/jobs/${id}`, req);
  }
  /** Put a running batch job back in the queue (scontrol requeue). */
  requeue(id: number | string): Promise<{ id: number; jobs: number[] }> {
    return this.request("POST", `/v1/jobs/${id}/requeue`);
  }
  /** Send a signal to a running job (scancel --signal). */
  signal(id: number | string, req: { signal: string; to?: "steps" | "batch" | "full" }): Promise<{ id: number; jobs: number[] }> {
    return this.request("POST", `/v1/jobs/${id}/signal`, req);
  }
  hold(id: number | string, release = false): Promise<{ id: number; jobs: number[] }> {
    return this.request("POST", `/v1/jobs/${id}/${release ? "release" : "hold"}`);
  }
  /** When and where a job would start (sbatch --test-only). */
  testOnly(req: JobSubmit): Promise<{ start: string | null; nodes: string[]; message: string }> {
    return this.request("POST", "/v1/jobs/test", req);
  }
  /** Drain a node (it takes no new work), or with `resume` make it schedulable again. */
  drain(node: string, opts: { resume?: boolean; reason?: string; owner?: boolean } = {}): Promise<{ node: string; drain: string | null; owner?: boolean }> {
    const path = `/v1/nodes/${encodeURIComponent(node)}/${opts.resume ? "resume" : "drain"}`;
    const body = { ...(opts.reason === undefined ? {} : { reason: opts.reason }), ...(opts.owner ? { owner: true } : {}) };
    return this.request("POST", path, Object.keys(body).length === 0 ? undefined : body);
  }
  nodes(): Promise<{ nodes: NodeView[] }> {
    return this.request("GET", "/v1/nodes");
  }
  partitions(): Promise<{ partitions: PartitionView[] }> {
    return this.request("GET", "/v1/partitions");
  }
  /** Every eligible waiting job's priority and factors, in queue order. */
  priorities(jobId?: number): Promise<{ settings: z.infer<typeof PrioritySettings>; jobs: PriorityView[] }> {
    return this.request("GET", jobId === undefined ? "/v1/priority" : `/v1/priority?job=${jobId}`);
  }
  /** Every user's shares, usage and fair-share factor. */
  shares(): Promise<{ settings: z.infer<typeof PrioritySettings>; users: ShareRowView[] }> {
    return this.request("GET", "/v1/shares");
  }
  /** The WebSocket URL of a controller endpoint (e.g. /v1/launcher). */
  wsUrl(path: string): string {
    return `${this.url.replace(/^http/, "ws")}${path}`;
  }
}
