/** Which device files are each GPU's (gpu-devices.ts), and `--gpu-devices`' checks, on directories laid out as the kernel's. */
import { afterAll, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gpuDeviceFiles } from "../../src/roles/agent/gpu-devices.ts";
import { gpuDevicesFlag } from "../../src/cli/inventory-flags.ts";

const root = mkdtempSync(join(tmpdir(), "ebb-gpu-devices-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const dirs = { dev: join(root, "dev"), drm: join(root, "drm"), nvidia: join(root, "nvidia") };
const put = (path: string, text = "") => {
  mkdirSync(join(path, ".."), { recursive: true });
  writeFileSync(path, text);
};

test("NVIDIA: the driver's minors in PCI bus order; without the driver's list, /dev/nvidiaN by N", () => {
  put(join(dirs.nvidia, "0000:b1:00.0", "information"), "Model: \t A100\nDevice Minor: \t 0\nBus Location: \t 0000:b1:00.0\n");
  put(join(dirs.nvidia, "0000:3b:00.0", "information"), "Model: \t A100\nDevice Minor: \t 2\nBus Location: \t 0000:3b:00.0\n");
  expect(gpuDeviceFiles("nvidia", dirs)).toEqual([[join(dirs.dev, "nvidia2")], [join(dirs.dev, "nvidia0")]]);
  for (const n of ["nvidia10", "nvidia2", "nvidiactl", "nvidia-uvm", "nvidia0"]) put(join(dirs.dev, n));
  expect(gpuDeviceFiles("nvidia", { ...dirs, nvidia: join(root, "none") })).toEqual([[join(dirs.dev, "nvidia0")], [join(dirs.dev, "nvidia2")], [join(dirs.dev, "nvidia10")]]);
});

test("AMD: each render node of vendor 0x1002 with its card, in render-node order; other vendors' left out", () => {
  put(join(dirs.drm, "renderD129", "device", "vendor"), "0x1002\n");
  mkdirSync(join(dirs.drm, "renderD129", "device", "drm", "card1"), { recursive: true });
  mkdirSync(join(dirs.drm, "renderD129", "device", "drm", "renderD129"), { recursive: true });
  put(join(dirs.drm, "renderD128", "device", "vendor"), "0x8086\n");
  put(join(dirs.drm, "renderD130", "device", "vendor"), "0x1002\n");
  mkdirSync(join(dirs.drm, "renderD130", "device", "drm", "card2"), { recursive: true });
  expect(gpuDeviceFiles("amd", dirs)).toEqual([
    [join(dirs.dev, "dri", "renderD129"), join(dirs.dev, "dri", "card1")],
    [join(dirs.dev, "dri", "renderD130"), join(dirs.dev, "dri", "card2")],
  ]);
  expect(gpuDeviceFiles(undefined, dirs)).toEqual([]);
});

test("--gpu-devices: one device file per GPU, each a device, with what to do in the error", () => {
  const node = { gpus: [null, null], gpuVendor: undefined };
  expect(() => gpuDevicesFlag("/dev/null", node)).toThrow("--gpu-devices: 1 file for 2 GPUs; give one device file per GPU, in index order (e.g. /dev/nvidia0,/dev/nvidia1)");
  expect(() => gpuDevicesFlag(`/dev/null,${join(root, "dev", "nvidia0")}`, node)).toThrow(`--gpu-devices ${join(root, "dev", "nvidia0")} is not a device file`);
  expect(() => gpuDevicesFlag("/dev/null,/dev/no-such-gpu", node)).toThrow("--gpu-devices /dev/no-such-gpu: ENOENT");
  expect(gpuDevicesFlag("/dev/null, /dev/zero", node)).toEqual([[{ kind: "c", major: 1, minor: 3 }], [{ kind: "c", major: 1, minor: 5 }]]);
  // Declared GPUs and no device files: nothing to fence, and the log says so.
  const notes: string[] = [];
  expect(gpuDevicesFlag(undefined, node, (m) => notes.push(m))).toEqual([]);
  expect(notes).toEqual(["2 GPUs and 0 found among the device files: jobs are not fenced off the GPUs they do not hold (name each GPU's file with --gpu-devices)"]);
});
