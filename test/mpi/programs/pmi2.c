/*
 * A real PMI-2 client (Slurm's libpmi2) across nodes: KVS put/fence/get, job and node attributes.
 * Debian's MPICH 4.0.2 only speaks PMI-1, so this is how the PMI-2 path is exercised end to end.
 */
#include <slurm/pmi2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#define CHECK(call, code) do { int rc_ = (call); if (rc_ != PMI2_SUCCESS) { fprintf(stderr, "%s failed: %d\n", #call, rc_); return code; } } while (0)
int main(void) {
  int spawned, size, rank, appnum, found, len, sum = 0;
  char jobid[256], key[64], val[1024], map[1024], attr[256];
  CHECK(PMI2_Init(&spawned, &size, &rank, &appnum), 10);
  CHECK(PMI2_Job_GetId(jobid, sizeof jobid), 11);
  CHECK(PMI2_Info_GetJobAttr("PMI_process_mapping", map, sizeof map, &found), 12);
  snprintf(key, sizeof key, "val-%d", rank);
  snprintf(val, sizeof val, "%d", rank + 1);
  CHECK(PMI2_KVS_Put(key, val), 13);
  const char *local = getenv("EBB_LOCALID");
  if (local && strcmp(local, "0") == 0) CHECK(PMI2_Info_PutNodeAttr("leader", getenv("EBB_NODENAME")), 14);
  CHECK(PMI2_KVS_Fence(), 15);
  for (int r = 0; r < size; r++) {
    snprintf(key, sizeof key, "val-%d", r);
    CHECK(PMI2_KVS_Get(jobid, r, key, val, sizeof val, &len), 16);
    sum += atoi(val);
  }
  CHECK(PMI2_Info_GetNodeAttr("leader", attr, sizeof attr, &found, 1), 17);
  CHECK(PMI2_KVS_Fence(), 18);
  printf("pmi2 rank=%d size=%d sum=%d map=%s leader=%s node=%s\n", rank, size, sum, map, attr, getenv("EBB_NODENAME"));
  CHECK(PMI2_Finalize(), 19);
  return 0;
}
