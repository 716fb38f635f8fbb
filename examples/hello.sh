#!/bin/sh
# A batch script: `ebb submit examples/hello.sh`, output in ebb-<jobid>.out.
#EBB -N 2
#EBB -t 5:00
#EBB --job-name hello

echo "batch script on $EBB_NODENAME, job $EBB_JOB_ID, nodes $EBB_NODELIST"
ebb run -l sh -c 'echo "hello from rank $EBB_PROCID of $EBB_NTASKS on $EBB_NODENAME"'
