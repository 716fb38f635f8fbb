/** The OpenAPI document is built from the app's routes: a route without a description, or a description without a route, stops it. */
import { expect, test } from "bun:test";
import { createApi } from "../../src/api/app.ts";
import { openApiDocument } from "../../src/api/openapi.ts";

const routes = () => createApi({} as never).routes;

test("every route of the app is described, and nothing else", () => {
  const doc = openApiDocument("t", routes(), "http://x") as { paths: Record<string, Record<string, { operationId: string }>> };
  const described = Object.entries(doc.paths).flatMap(([p, item]) => Object.keys(item).map((m) => `${m.toUpperCase()} ${p}`));
  const routed = [...new Set(routes().filter((r) => r.method !== "ALL").map((r) => `${r.method} ${r.path.replace(/:(\w+)/g, "{$1}")}`))];
  // The two WebSockets are served beside the app (roles/controller/server.ts), described by hand.
  expect(described.filter((d) => d !== "GET /v1/launcher" && d !== "GET /v1/agent").sort()).toEqual(routed.sort());
  expect(described).toContain("GET /v1/launcher");
  expect(described).toContain("GET /v1/agent");
});

test("a route with no description, or a description with no route, is an error naming it", () => {
  expect(() => openApiDocument("t2", [...routes(), { method: "GET", path: "/v1/new" }], "http://x")).toThrow("no description of the route GET /v1/new");
  expect(() => openApiDocument("t3", routes().filter((r) => r.path !== "/v1/nodes"), "http://x")).toThrow("described but not routed: GET /v1/nodes");
});
