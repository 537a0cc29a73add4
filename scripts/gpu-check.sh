#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The whole GPU check, run on the GPU machine (through the device tool):
#   build   configure and build with CUDA (sm_90) in build-gpu
#   test    every ctest test, GPU tests included (they fail, not skip, without a GPU here)
#   gputest only the ctest tests labelled gpu (when the CPU tests passed elsewhere and
#           device time is short), and cli_cuda_module (the module's loading and slices)
#   sanitize compute-sanitizer memcheck and racecheck on a small GPU case
#   bench   short GPU benchmarks with peers (torch brute force, cKDTree on all cores)
#   sched   the scheduling benchmark (bench/run_scheduling.sh: hybrid, auto; GPU and CPU)
#   gpubuild GPU kd and octree build and GPU query schedules: their tests, memcheck on
#           them, and bench_gpu_build (host build and sort in the same run for the ratio)
#   index   device-resident indexes: test_gpu_index (memcheck on its small cases, racecheck on its bucket order),
#           bench_gpu_index (variants auto, with extra leaf sizes $CANOPY_BENCH_LEAF
#           (default 8,32), dr and dr_l; caller's order and device-sorted queries; the
#           goals table; host arrays by phase against pinned copies, one-shot copies;
#           bench/results/gpu-index.md)
#   nbody   GPU multipole gravity and n-body: test_gpu_multipole, memcheck and racecheck
#           on it, and bench_nbody_gpu (bench/results/nbody.md, GPU section)
#   dist    whole `canopy gravity` (1M Plummer, order 2) and `canopy knn` (2M + 2M
#           uniform 3-D, k 8) processes on this host's 16 cores: one process of 16
#           threads against mpirun -np 4 of 4 threads and -np 16 of 1, 3 interleaved
#           runs, at most 4 minutes (bench/run_dist_cli.sh; bench/results/distributed.md),
#           in build-gpu when it has the MPI layer, else in a CPU-only MPI build; the
#           force-evaluation phases alone: bench/run_dist_16core.sh; the MPI equivalence
#           tests themselves run in the test stage
#   dist2gpu one MPI rank per GPU on a host with two: test_gpu_let, memcheck and
#           racecheck on it, test_dist_gpu with 2 ranks sharing GPU 0 and with 2 ranks
#           on 2 GPUs, then
#           plummer1m force evaluation on 1 and 2 GPUs (strong and weak scaling, time
#           split), a 100-step n-body run, kNN 2M + 2M on 1 and 2 GPUs with identical
#           rows (bench/run_dist_2gpu.sh; bench/results/distributed.md, "Two GPUs");
#           the bench skips with one line when fewer than 2 GPUs are visible
#   dist1gpu issue 36 item 2 on one GPU: test_dist_gpu on 1 rank and on 2 ranks sharing
#           it (bucket opening: trees built on the device against the host-built path),
#           then an n-body step of plummer1m through canopy_dist_nbody on one rank
#           against `canopy nbody --backend gpu` (bench/run_dist_1gpu.sh)
#   cli     host arrays on the GPU: test_gpu_host_arrays (staged index kNN and
#           canopy_knn's GPU build against brute force) and memcheck on its small
#           cases, then one `canopy knn` process on rand7 (200k + 200k, 7-D, k = 8):
#           GPU (device build, pinned staging, early CUDA start; without the early
#           start; self-queries on the generic path), CPU, `canopy info` (CUDA's
#           start-up floor), wall time of the whole process and --stats phases
#           (bench/cli_knn_gpu.sh)
#   simt    SIMT on SIMD (Wu ch. 6): test_simt_gpu, memcheck and racecheck on it (the
#           pyramid kernels share memory across barriers), canopy-bench-simt --gpu (the
#           kernels of src/simt/kernels.h on the GPU: CUDA-event and whole-call times),
#           and its CPU application table on this host's idle cores (1 and all threads;
#           bench/results/simt.md)
#   forest1core issue 20 on this host's CPU, one core: canopy's default forest
#           prediction against XGBoost's inplace_predict on depth-8 models with 5 % NaN
#           (needs xgboost in python3), and the cache model's layout pick and the SIMD
#           walker's layouts against measured times (bench/run_forest_onecore.sh, 3
#           rounds, at most 175 s; bench/results/forests.md)
#   edges   issue 30's edges benchmark (bench/run_edges.sh: the CPU rows against cKDTree
#           and pykdtree, and bench/run_edges_gpu.sh where it exists; pykdtree from
#           .carry/whl; bench/results/edges.md)
#   cudakdtree issue 30's GPU kNN goals against cudaKDTree (bench/run_peer_cudakdtree.sh:
#           compiles bench/peer_cudakdtree.cu against its headers in $CUKD_DIR, default
#           .carry/cukd-src, then canopy's device-pointer kNN rows and every cudaKDTree
#           variant on clust2, cities and rand7, k = 8 and NN; the table of canopy
#           against its best below)
#   paircount pair counts on the GPU pair walk (issue 37): test_gpu_paircount (brute
#           force and CPU pair walk equality, the 200k timings), memcheck and racecheck
#           on its small cases, then bench/run_paircount.sh against Corrfunc and TreeCorr
#           when python3 has them (one thread and all cores, and the GPU; env
#           CANOPY_BENCH_THREADS, CANOPY_BENCH_SIZES, CANOPY_BENCH_REPS override; Corrfunc
#           from .carry/whl where python3 lacks it); CANOPY_BENCH_GPU_ONLY=1 times the
#           GPU rows alone with their phases, for each of CANOPY_BENCH_GPU_VARIANTS
#           (bench/paircount_bench.py --gpu-variants); an nsys profile of a 2M GPU call
#           where nsys exists; CANOPY_PAIRCOUNT_SANITIZE=0 skips memcheck and racecheck
#   python  the Python package on CUDA arrays (issue 32): python/tests/test_gpu_arrays.py
#           (PyTorch and CuPy tensors through Index, query, gravity and the graph
#           builders against brute force, outputs on the input's device, no host entry
#           called, no copy in the stats) and test_arrays.py, over build-gpu's libcanopy (CANOPY_LIBRARY, the
#           CUDA module beside it); pytest from python3, else from wheels in .carry/whl
#   pybench issue 32's goals table (bench/run_python_gpu.sh: the package on torch CUDA
#           tensors against the C device entries, PyTorch brute force once a row unless
#           CANOPY_BENCH_BRUTE=0, the CPU knn_graph against scikit-learn; at most 5 minutes,
#           which the brute force on 1M points alone can exceed: give it a call of its own;
#           bench/results/python-gpu.md)
# Usage: scripts/gpu-check.sh [build] [test] [gputest] [sanitize] [bench] [sched] [gpubuild] [index]
#        [nbody] [dist] [dist2gpu] [dist1gpu] [cli] [simt] [forest1core] [edges] [cudakdtree]
#        [paircount] [python] [pybench]
#        (default: build test sanitize bench)
# The GPU machine installs nothing: json-c and FFTW come as .deb files in .carry/debs and the
# Python wheels in .carry/whl (both filled by scripts/make-carry.sh), the debs unpacked
# outside the source tree (the exported CMake package refuses include paths inside it).
# Results (logs, JSON lines, summary) go to $OUT (default ./gpu-out). Summary last.
# The device copy of the tree has no .git: pass CANOPY_COMMIT=$(git rev-parse --short HEAD).
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
out="${OUT:-$root/gpu-out}"
mkdir -p "$out"
stages="${*:-build test sanitize bench}"
summary="$out/summary.md"
: >"$summary"
note() { echo "$*" | tee -a "$summary"; }
# One GPU test binary of the build: its log LOG, its last LINES lines in the summary.
gpu_test() {
    local name=$1 log=$2 lines=${3:-1}
    "$b/$name" >"$out/$log" 2>&1
    local rc=$?
    note "- $name: rc $rc, $(tail -n "$lines" "$out/$log" | tr '\n' ' ')"
    [ $rc -eq 0 ] || status=1
}
# compute-sanitizer TOOL on a GPU test's small cases (CANOPY_GPU_SMALL=1, or the test's
# narrower mode in $small_mode), logged to LOG.
sanitize() {
    local tool=$1 label=$2 log=$3 name=$4
    CANOPY_GPU_SMALL=${small_mode:-1} compute-sanitizer --tool "$tool" --error-exitcode 9 "$b/$name" \
        >"$out/$log" 2>&1
    local rc=$?
    note "- compute-sanitizer $tool${label:+ ($label)}: rc $rc, $(grep -E '(ERROR|RACECHECK) SUMMARY' "$out/$log" | tail -1)"
    # A non-zero rc with a clean summary is not a finding of the tool (that is rc 9): it
    # is the test's own exit status passed through, or the tool refusing something it
    # does not support. Name which, from the log, so the summary says why.
    if [ $rc -ne 0 ] && [ $rc -ne 9 ]; then
        note "  (not a ${tool} finding: test's last line '$(grep -v '^=========' "$out/$log" |
            tail -1)'; tool: $(grep -E '^========= (Error|Warning|Target)' "$out/$log" |
            head -2 | tr '\n' ' '))"
    fi
    [ $rc -eq 0 ] || status=1
}
export OMP_WAIT_POLICY=passive

prefix_args=()
if [ ! -e /usr/include/json-c/json.h ] || [ ! -e /usr/include/fftw3.h ]; then
    jsonc="${TMPDIR:-/tmp}/canopy-jsonc"
    mkdir -p "$jsonc"
    for f in "$root"/.carry/debs/*.deb; do dpkg -x "$f" "$jsonc"; done
    prefix_args=(-DCMAKE_PREFIX_PATH="$jsonc/usr")
    export LD_LIBRARY_PATH="$jsonc/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}"
fi

b="$root/build-gpu"
gpu="$(nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>/dev/null | head -1)"
note "# canopy gpu-check"
commit="${CANOPY_COMMIT:-$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)}"
note "- device: ${gpu:-none}; commit $commit; $(date -u +%Y-%m-%dT%H:%MZ)"

status=0
for stage in $stages; do
    case "$stage" in
    build)
        t0=$(date +%s)
        if cmake -S "$root" -B "$b" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCANOPY_CUDA=ON \
            "${prefix_args[@]}" >"$out/configure.log" 2>&1 &&
            cmake --build "$b" -j "$(nproc)" >"$out/build.log" 2>&1; then
            note "- build: ok ($(($(date +%s) - t0)) s)"
        else
            tail -n 40 "$out/configure.log" "$out/build.log"
            note "- build: FAILED"
            exit 1
        fi
        ;;
    gputest)
        ctest --test-dir "$b" -L gpu -j 8 --output-on-failure >"$out/ctest-gpu.log" 2>&1
        rc=$?
        note "- ctest -L gpu: $(grep -E 'tests passed|tests failed' "$out/ctest-gpu.log" | tail -1) (rc $rc)"
        grep -E "^ *[0-9]+/[0-9]+ Test.*(Failed|\*\*\*)" "$out/ctest-gpu.log" | tee -a "$summary"
        [ $rc -eq 0 ] || status=1
        # The module itself: loads beside the CLI and renamed, exports one symbol, its
        # slices match the library's (a stand-in with other slices is refused).
        ctest --test-dir "$b" -R '^cli_cuda_module$' --output-on-failure >"$out/ctest-module.log" 2>&1
        rc=$?
        note "- cli_cuda_module: $(grep -E 'tests passed|tests failed' "$out/ctest-module.log" | tail -1) (rc $rc)"
        [ $rc -eq 0 ] || status=1
        ;;
    test)
        ctest --test-dir "$b" -j 8 --output-on-failure -E retrain >"$out/ctest.log" 2>&1
        rc=$?
        note "- ctest: $(grep -E 'tests passed|tests failed' "$out/ctest.log" | tail -1) (rc $rc)"
        grep -E "^ *[0-9]+/[0-9]+ Test.*(Failed|\*\*\*)" "$out/ctest.log" | tee -a "$summary"
        "$b/test_gpu_traverse" >"$out/gpu_traverse.log" 2>&1
        note "- test_gpu_traverse: $(tail -n 2 "$out/gpu_traverse.log" | tr '\n' ' ')"
        "$b/test_gpu_forest" >"$out/gpu_forest.log" 2>&1
        note "- test_gpu_forest: $(tail -n 2 "$out/gpu_forest.log" | tr '\n' ' ')"
        "$b/test_gpu_graph" >"$out/gpu_graph.log" 2>&1
        note "- test_gpu_graph: $(tail -n 2 "$out/gpu_graph.log" | tr '\n' ' ')"
        [ $rc -eq 0 ] || status=1
        ;;
    sanitize)
        for tool in memcheck racecheck; do
            sanitize "$tool" "" "sanitizer-$tool.log" test_gpu_traverse
        done
        sanitize memcheck "forest" sanitizer-forest-memcheck.log test_gpu_forest
        # Graph and tree strategies: memcheck on all of them (dynamic parallelism
        # included); racecheck, which does not support dynamic parallelism (it warns
        # and fails), on the host-launched ones: the shared-memory reductions. The
        # module also holds the device-launching kernels: loaded lazily (only the
        # kernels launched), racecheck never sees them; loaded eagerly (a driver or
        # environment without lazy loading), it refuses them and exits non-zero with
        # "0 hazards" (issue 35, row 13).
        sanitize memcheck "graph" sanitizer-graph-memcheck.log test_gpu_graph
        CUDA_MODULE_LOADING=LAZY CANOPY_GPU_NO_DP=1 sanitize racecheck \
            "graph, no device launches" sanitizer-graph-racecheck.log test_gpu_graph
        ;;
    bench)
        "$root/bench/run_gpu.sh" "$b" "$out" >"$out/bench.log" 2>&1
        note "- bench: rc $? (tables below)"
        python3 "$root/bench/report.py" "$out"/bench-*.jsonl >"$out/bench.md" 2>>"$out/bench.log"
        cat "$out/bench.md" >>"$summary"
        ;;
    sched)
        "$root/bench/run_scheduling.sh" "$b" "$out" gpu cpu >"$out/sched.log" 2>&1
        note "- scheduling bench: rc $? (tables below)"
        python3 "$root/bench/report_scheduling.py" "$out"/sched-*.jsonl >"$out/scheduling.md" \
            2>>"$out/sched.log"
        cat "$out/scheduling.md" >>"$summary"
        ;;
    gpubuild)
        gpu_test test_gpu_build gpu_build.log
        sanitize memcheck "gpu build" sanitizer-build-memcheck.log test_gpu_build
        gpu_test test_gpu_schedule gpu_schedule.log
        sanitize memcheck "gpu schedule" sanitizer-schedule-memcheck.log test_gpu_schedule
        CANOPY_THREADS=16 "$b/canopy-bench-gpu-build" 15 >"$out/gpu-build.md" 2>"$out/gpu-build.err"
        note "- GPU build bench: rc $? (table below)"
        cat "$out/gpu-build.md" >>"$summary"
        ;;
    index)
        gpu_test test_gpu_index gpu_index.log
        sanitize memcheck "index, small" sanitizer-index-memcheck.log test_gpu_index
        # the bucket order's scatter shares counts through shared memory
        small_mode=order sanitize racecheck "index, bucket order" sanitizer-index-racecheck.log \
            test_gpu_index
        # auto and dr_l run the specialised kd kNN kernel; gdr the generic engine
        for v in auto dr_l gdr; do
            leaves=""
            [ $v = auto ] && leaves="${CANOPY_BENCH_LEAF-8,32}"
            CANOPY_BENCH_LEAF="$leaves" "$b/canopy-bench-gpu-index" 15 $v \
                >"$out/gpu-index-$v.md" 2>"$out/gpu-index-$v.err"
            note "- resident index bench ($v): rc $? (table below)"
            cat "$out/gpu-index-$v.md" >>"$summary"
        done
        # One profile of the resident kNN kernel (auto: the kd kernel, clustv2 k = 8, the
        # first launch), where Nsight Compute is installed: where the kernel's time goes.
        ncu_bin="$(command -v ncu || ls /usr/local/cuda*/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -n 1)"
        if [ -n "$ncu_bin" ]; then
            timeout 150 "$ncu_bin" --kernel-name regex:kd_walk --launch-count 1 \
                --section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy \
                --section LaunchStats --section WarpStateStats \
                "$b/canopy-bench-gpu-index" 3 auto >"$out/gpu-index-ncu.txt" 2>&1
            note "- ncu on the kd walk (kNN): rc $? ($ncu_bin)"
            grep -E "kd_walk_kernel|Duration|Registers Per|Achieved Occupancy|Theoretical Occupancy|Memory Throughput|DRAM Throughput|L1/TEX Hit|L2 Hit|Compute \(SM\) Throughput|Warp Cycles Per Issued|Block Limit" \
                "$out/gpu-index-ncu.txt" | head -n 30 | sed 's/^/    /' >>"$summary"
        else
            note "- ncu not found: no kernel profile"
        fi
        # Every kernel's device time over a short bench run (Nsight Systems, where
        # installed): what the query sort's kernels cost beside the walk.
        nsys_bin="$(command -v nsys || ls /usr/local/cuda*/bin/nsys /opt/nvidia/nsight-systems/*/bin/nsys 2>/dev/null | head -n 1)"
        if [ -n "$nsys_bin" ]; then
            timeout 150 "$nsys_bin" profile -o "$out/gpu-index-nsys" --force-overwrite true \
                "$b/canopy-bench-gpu-index" 3 auto >"$out/gpu-index-nsys.log" 2>&1 &&
                timeout 100 "$nsys_bin" stats --report cuda_gpu_kern_sum --format csv \
                    "$out/gpu-index-nsys.nsys-rep" >"$out/gpu-index-nsys-kernels.csv" 2>>"$out/gpu-index-nsys.log"
            note "- nsys kernel summary of the index bench: rc $? ($nsys_bin; top 12 by total time)"
            head -n 13 "$out/gpu-index-nsys-kernels.csv" | cut -c1-220 | sed 's/^/    /' >>"$summary"
            rm -f "$out"/gpu-index-nsys.nsys-rep "$out"/gpu-index-nsys.sqlite
        fi
        ;;
    nbody)
        gpu_test test_gpu_multipole gpu_multipole.log
        for tool in memcheck racecheck; do
            sanitize "$tool" "gpu multipole" "sanitizer-multipole-$tool.log" test_gpu_multipole
        done
        "$b/canopy-bench-nbody-gpu" >"$out/nbody-gpu.md" 2>"$out/nbody-gpu.err"
        note "- GPU n-body bench: rc $? (tables below)"
        cat "$out/nbody-gpu.md" >>"$summary"
        ;;
    dist)
        db="$b"
        if [ ! -x "$b/canopy-mpi" ]; then # build-gpu without MPI: a CPU-only MPI build
            db="$root/build-dist16"
            { cmake -S "$root" -B "$db" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCANOPY_CUDA=OFF \
                -DCANOPY_MPI=ON "${prefix_args[@]}" &&
                cmake --build "$db" --target canopy canopy-mpi -j "$(nproc)"; } \
                >"$out/dist-build.log" 2>&1 || note "- dist: MPI build failed ($out/dist-build.log)"
        fi
        t0=$(date +%s)
        CANOPY_COMMIT="$commit" CORES="${CANOPY_DIST_CORES:-16}" RANKS="4 16" REPS=3 \
            N_GRAV=1000000 N_KNN=2000000 timeout 240 "$root/bench/run_dist_cli.sh" "$db" \
            >"$out/dist-cli.txt" 2>&1
        note "- distributed CLI bench (1 process x 16 threads vs 4 ranks x 4, 16 x 1): rc $?," \
            "$(($(date +%s) - t0)) s (below)"
        cat "$out/dist-cli.txt" >>"$summary"
        RANKS=4 REPS=5 timeout 120 "$root/bench/run_dist_launch.sh" "$db" >"$out/dist-launch.txt" 2>&1
        note "- MPI launch floor (mpirun -np 4: true, bare MPI_Init/Finalize, canopy): rc $?"
        cat "$out/dist-launch.txt" >>"$summary"
        ;;
    dist1gpu)
        for np in 1 2; do
            OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 timeout 180 \
                mpirun --oversubscribe --bind-to none -np "$np" -x CANOPY_THREADS=4 \
                -x OMP_NUM_THREADS=4 -x CUDA_VISIBLE_DEVICES=0 "$b/test_dist_gpu" \
                >"$out/dist-1gpu-np$np.log" 2>&1
            rc=$?
            note "- test_dist_gpu, $np rank(s) on GPU 0: rc $rc, $(grep -E 'device build|nbody|passed|failed|FAIL' "$out/dist-1gpu-np$np.log" | tr '\n' ' ' | cut -c1-800)"
            [ $rc -eq 0 ] || status=1
        done
        t0=$(date +%s)
        CANOPY_COMMIT="$commit" timeout 150 "$root/bench/run_dist_1gpu.sh" "$b" >"$out/dist-1gpu.txt" 2>&1
        rc=$?
        note "- one GPU through the distributed path: rc $rc, $(($(date +%s) - t0)) s (below)"
        [ $rc -eq 0 ] || status=1
        cat "$out/dist-1gpu.txt" >>"$summary"
        ;;
    dist2gpu)
        gpu_test test_gpu_let gpu_let.log 2
        for tool in memcheck racecheck; do
            sanitize "$tool" "gpu LET walk" "sanitizer-let-$tool.log" test_gpu_let
        done
        # The GPU-rank equivalence tests with 2 ranks sharing GPU 0 (issue 16), then one
        # rank per GPU.
        for vis in 0 all; do
            vis_args=()
            [ "$vis" = all ] || vis_args=(-x CUDA_VISIBLE_DEVICES="$vis")
            OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 timeout 300 \
                mpirun --oversubscribe --bind-to none -np 2 -x CANOPY_THREADS=4 \
                -x OMP_NUM_THREADS=4 "${vis_args[@]}" "$b/test_dist_gpu" \
                >"$out/dist-gpu-$vis.log" 2>&1
            rc=$?
            note "- test_dist_gpu, 2 ranks, GPUs $vis: rc $rc, $(grep -E 'rows|nbody|passed|failed|FAIL' "$out/dist-gpu-$vis.log" | tr '\n' ' ' | cut -c1-600)"
            [ $rc -eq 0 ] || status=1
        done
        t0=$(date +%s)
        CANOPY_COMMIT="$commit" "$root/bench/run_dist_2gpu.sh" "$b" >"$out/dist-2gpu.txt" 2>&1
        rc=$?
        note "- two-GPU distributed bench: rc $rc, $(($(date +%s) - t0)) s (below)"
        [ $rc -eq 0 ] || status=1
        cat "$out/dist-2gpu.txt" >>"$summary"
        ;;
    cli)
        gpu_test test_gpu_host_arrays gpu_host_arrays.log
        sanitize memcheck "host arrays, small" sanitizer-host-arrays-memcheck.log \
            test_gpu_host_arrays
        "$root/bench/cli_knn_gpu.sh" "$b" "$out/cli-knn" >"$out/cli-knn.md" 2>"$out/cli-knn.err"
        note "- CLI whole process, rand7 kNN k=8: rc $? (below)"
        cat "$out/cli-knn.md" >>"$summary"
        rm -rf "$out/cli-knn"
        ;;
    simt)
        gpu_test test_simt_gpu simt_gpu.log
        for tool in memcheck racecheck; do
            sanitize "$tool" "simt" "sanitizer-simt-$tool.log" test_simt_gpu
        done
        "$b/canopy-bench-simt" 5 --gpu >"$out/simt-gpu.md" 2>"$out/simt-gpu.err"
        note "- SIMT GPU bench: rc $? (tables below)"
        cat "$out/simt-gpu.md" >>"$summary"
        note ""
        note "- SIMT CPU applications on this host: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2), $(nproc) CPUs"
        "$b/canopy-bench-simt" 3 --apps --threads "1,$(nproc)" >"$out/simt-cpu.md" 2>"$out/simt-cpu.err"
        note "- SIMT CPU bench: rc $? (table below)"
        cat "$out/simt-cpu.md" >>"$summary"
        ;;
    paircount)
        gpu_test test_gpu_paircount gpu_paircount.log 8
        # the sanitizers run two lane-counter kernels a case: CANOPY_PAIRCOUNT_SANITIZE=0
        # leaves them out of a call that only times
        if [ "${CANOPY_PAIRCOUNT_SANITIZE:-1}" = 1 ]; then
            for tool in memcheck racecheck; do
                sanitize "$tool" "paircount" "sanitizer-paircount-$tool.log" test_gpu_paircount
            done
        else
            note "- compute-sanitizer (paircount): skipped (CANOPY_PAIRCOUNT_SANITIZE=0)"
        fi
        # Where a 2M-point GPU call's time goes, as the device sees it: two whole calls
        # (the first warms up) of 2M uniform points, 10 log bins, under nsys
        nsys_bin="$(command -v nsys || ls /usr/local/cuda*/bin/nsys /opt/nvidia/nsight-systems/*/bin/nsys 2>/dev/null | head -n 1)"
        if [ -n "$nsys_bin" ]; then
            PYTHONPATH="$root/python/src" CANOPY_LIBRARY="$b/libcanopy.so" timeout 120 \
                "$nsys_bin" profile --stats=true -o "$out/paircount-nsys" --force-overwrite true \
                python3 -c 'import numpy as np, canopy
x = np.random.default_rng(42).random((2000000, 3), dtype=np.float32)
for _ in range(2): canopy.paircount(x, 0.005, 0.1, 10, log=True, backend="gpu")' \
                >"$out/paircount-nsys.log" 2>&1
            note "- nsys, two 2M uniform GPU paircount calls: rc $? ($nsys_bin; kernels and copies below, all in paircount-nsys.log)"
            grep -A 12 -E 'cuda_gpu_(kern|mem_time)_sum' "$out/paircount-nsys.log" | cut -c1-200 |
                sed 's/^/    /' >>"$summary"
            rm -f "$out"/paircount-nsys.nsys-rep "$out"/paircount-nsys.sqlite
        else
            note "- nsys: not on this machine (no 2M profile)"
        fi
        # The GPU machine has no Corrfunc: a cp312 wheel built elsewhere (pip wheel Corrfunc,
        # its theory/ and mocks/ test data dropped), its pure-Python needs wurlitzer and
        # future, and Debian's libgsl27 and libgslcblas0 .debs (unpacked with json-c above)
        # can travel in .carry.
        if ! python3 -c "import Corrfunc" 2>/dev/null && ls "$root"/.carry/whl/corrfunc-*.whl >/dev/null 2>&1; then
            cf_site="${TMPDIR:-/tmp}/canopy-corrfunc"
            python3 -m pip install -q --no-index --no-deps --target "$cf_site" \
                "$root"/.carry/whl/{corrfunc,wurlitzer,future}-*.whl
            export PYTHONPATH="$cf_site${PYTHONPATH:+:$PYTHONPATH}"
        fi
        if python3 -c "import Corrfunc" 2>/dev/null; then
            CANOPY_BENCH_THREADS="${CANOPY_BENCH_THREADS:-1,$(nproc)}" CANOPY_BENCH_GPU=1 timeout "${CANOPY_BENCH_TIMEOUT:-480}" \
                "$root/bench/run_paircount.sh" "$b" "$out/paircount" >"$out/paircount.log" 2>&1
            note "- paircount bench: rc $? (below)"
            cat "$out/paircount/paircount.md" >>"$summary"
        else
            note "- paircount bench: skipped, python3 cannot import Corrfunc ($(python3 -c "import Corrfunc" 2>&1 | tail -1); pip install Corrfunc needs libgsl-dev, or a wheel in .carry/whl)"
        fi
        ;;
    forest1core)
        if python3 -c "import xgboost" 2>/dev/null; then
            CANOPY_BENCH_ROUNDS=3 CANOPY_BENCH_ENGINES="vm_simd simd" timeout 175 \
                "$root/bench/run_forest_onecore.sh" "$b" "$out/forest1core" \
                >"$out/forest1core.log" 2>&1
            note "- forest one-core bench: rc $? (below; $(grep -m1 'Model name' \
                "$out/forest1core/onecore-machine.txt" | tr -s ' '))"
            cat "$out/forest1core/onecore-report.md" >>"$summary"
        else
            note "- forest one-core bench: skipped (no xgboost in python3)"
        fi
        ;;
    edges)
        t0=$(date +%s)
        CANOPY_COMMIT="$commit" "$root/bench/run_edges.sh" "$b" "$out/edges" >"$out/edges.log" 2>&1
        rc=$?
        note "- edges bench (issue 30): rc $rc, $(($(date +%s) - t0)) s (below; log edges.log)"
        [ $rc -eq 0 ] || status=1
        [ -f "$out/edges/edges.md" ] && cat "$out/edges/edges.md" >>"$summary"
        ;;
    cudakdtree)
        t0=$(date +%s)
        "$root/bench/run_peer_cudakdtree.sh" "$b" "${CUKD_DIR:-$root/.carry/cukd-src}" \
            "$out/cudakdtree" >"$out/cudakdtree.log" 2>&1
        rc=$?
        note "- cudaKDTree beside canopy's GPU kNN (issue 30): rc $rc, $(($(date +%s) - t0)) s (below; log cudakdtree.log)"
        [ $rc -eq 0 ] || status=1
        [ -f "$out/cudakdtree/table.md" ] && cat "$out/cudakdtree/table.md" >>"$summary"
        ;;
    python)
        site="${TMPDIR:-/tmp}/canopy-pytest"
        if ! python3 -c "import pytest" 2>/dev/null && ls "$root"/.carry/whl/pytest-*.whl >/dev/null 2>&1; then
            # pytest and its pure-Python dependencies only (other carried wheels are benches')
            python3 -m pip install -q --no-index --no-deps --target "$site" \
                "$root"/.carry/whl/{pytest,pluggy,iniconfig,packaging,pygments}-*.whl
        fi
        t0=$(date +%s)
        CANOPY_REQUIRE_GPU=1 PYTHONPATH="$root/python/src:$site" CANOPY_LIBRARY="$b/libcanopy.so" timeout 300 \
            python3 -m pytest -q -rs -p no:cacheprovider "$root/python/tests/test_gpu_arrays.py" \
            "$root/python/tests/test_arrays.py" >"$out/python.log" 2>&1
        rc=$?
        note "- python package on CUDA arrays: rc $rc, $(($(date +%s) - t0)) s, $(tail -n 1 "$out/python.log")"
        grep -E "^(SKIPPED|FAILED|ERROR)" "$out/python.log" | head -20 >>"$summary"
        [ $rc -eq 0 ] || status=1
        ;;
    pybench)
        t0=$(date +%s)
        CANOPY_BENCH_REPS="${CANOPY_BENCH_REPS:-5}" timeout 300 "$root/bench/run_python_gpu.sh" "$b" \
            "$out/python-gpu" --profile >"$out/pybench.log" 2>&1
        rc=$?
        note "- python GPU bench (issue 32): rc $rc, $(($(date +%s) - t0)) s (below)"
        [ $rc -eq 0 ] || status=1
        [ -f "$out/python-gpu/python-gpu.md" ] && cat "$out/python-gpu/python-gpu.md" >>"$summary"
        ;;
    *) echo "unknown stage $stage"; exit 2 ;;
    esac
done
echo
echo "================ summary ================"
cat "$summary"
exit $status
