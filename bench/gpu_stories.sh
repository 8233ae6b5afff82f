#!/usr/bin/env bash
# The three research stories at their GPU size (`run.sh --direct --scale gpu`), side by side,
# on a machine with CUDA: how the figures in each story's story.md ("At GPU size") were made.
# What it writes under $OUT (default /tmp/gpu-stories): gpu.txt (the card), timings.txt (each
# story's wall time and exit code) and gpu-stories.tar.gz (each story's results/ and log).
#   bash bench/gpu_stories.sh            # with wild and the stories' requirements installed
set -uo pipefail
out="${OUT:-/tmp/gpu-stories}"
mkdir -p "$out"
root="$(cd "$(dirname "$0")/.." && pwd)"
export PYTHONPATH="$root${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
python="${PYTHON:-python3}"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv >"$out/gpu.txt" 2>&1
"$python" -c 'import torch; print("torch", torch.__version__, "cuda", torch.cuda.is_available())' >>"$out/gpu.txt" 2>&1
limit="${STORY_LIMIT_S:-330}"
run_story() {
  local story="$1" start end rc
  start=$(date +%s)
  PYTHON="$python" timeout "$limit" "$root/examples/$story/run.sh" --direct --scale gpu \
    --keep-in "/tmp/gpu-$story" >"/tmp/gpu-$story/story.log" 2>&1
  rc=$?
  end=$(date +%s)
  echo "$story exit=$rc wall=$((end - start))s" >>"$out/timings.txt"
}
for story in dit-training prompt-tuning rl-training; do
  rm -rf "/tmp/gpu-$story" && mkdir -p "/tmp/gpu-$story"
  run_story "$story" &
done
# The GPU's use while the stories run, once a second (utilisation %, memory MiB).
nvidia-smi --query-gpu=timestamp,utilization.gpu,memory.used --format=csv,noheader -l 1 \
  >"/tmp/gpu-dit-training/gpu-use.csv" 2>&1 &
sampler=$!
wait $(jobs -p | grep -v "^$sampler$")
kill "$sampler" 2>/dev/null
cat "$out/timings.txt"
tar czf "$out/gpu-stories.tar.gz" -C /tmp --exclude='*.pt' --exclude='.wild/runs/*/attempt-*' \
  gpu-dit-training gpu-prompt-tuning gpu-rl-training
ls -la "$out"
