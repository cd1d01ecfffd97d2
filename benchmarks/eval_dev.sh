#!/usr/bin/env bash
# Evaluation benchmark, from a clean state (fresh temporary homes), one command:
#   1. MMLongBench dev set (44 PDFs, 355 questions): page hit@k / MRR (arbiter vs baselines), not found,
#      answer accuracy and tokens of both regimes;
#   2. Docugami (20 10-Q filings, 195 questions) corpus-wide: document hit rate.
# Records each run's wall time and peak memory (/usr/bin/time -v, else bash `time`). Goal: well under 15 min
# on 2 cores. Usage (from anywhere):  benchmarks/eval_dev.sh [OUT_DIR]   (env: ARBITER_SHARED_DATA, EVAL_LIMIT,
# EVAL_SETS="mmlongbench docugami", EVAL_ARGS for extra `arbiter eval` options, e.g. "--arbiter openai",
# EVAL_HOME_SEED=DIR: copy an already-ingested home into each fresh home first, to time the pipeline without
# re-embedding; the numbers are then not from a clean state, say so when quoting them).
set -uo pipefail
REPO="$(cd "$(dirname "$0")/.." && pwd)"
cd "$REPO"
[ -f .venv/bin/activate ] && . .venv/bin/activate
DATA="${ARBITER_SHARED_DATA:-$REPO/../shared/data}"
OUT="${1:-$(mktemp -d -t arbiter-eval-dev-XXXX)}"
HOMES="$(mktemp -d -t arbiter-eval-home-XXXX)"
mkdir -p "$OUT"
LIMIT_ARGS=()
[ -n "${EVAL_LIMIT:-}" ] && LIMIT_ARGS=(--limit "$EVAL_LIMIT")
read -r -a EXTRA <<< "${EVAL_ARGS:-}"

# `arbiter eval` once the command is registered; the same function through typer until then.
if arbiter eval --help >/dev/null 2>&1; then
  EVAL=(arbiter eval)
else
  EVAL=(python -c 'import sys, typer; from flows.cli_eval import eval_cmd; sys.argv[0] = "arbiter eval"; typer.run(eval_cmd)')
fi

run_set() {  # name, extra args...
  local name="$1"; shift
  local cmd=("${EVAL[@]}" "$DATA/$name/questions.jsonl" --data-root "$DATA" --json --home "$HOMES/$name"
             "${LIMIT_ARGS[@]}" "${EXTRA[@]}" "$@")
  echo "== $name: ${cmd[*]}" >&2
  if [ -n "${EVAL_HOME_SEED:-}" ]; then cp -r "$EVAL_HOME_SEED" "$HOMES/$name"; fi
  local rc
  if [ -x /usr/bin/time ]; then
    /usr/bin/time -v -o "$OUT/$name.time" "${cmd[@]}" > "$OUT/$name.json" 2> "$OUT/$name.log"; rc=$?
  else
    { time "${cmd[@]}" > "$OUT/$name.json" 2> "$OUT/$name.log"; } 2> "$OUT/$name.time"; rc=$?
  fi
  echo "$rc" > "$OUT/$name.rc"
  python - "$OUT" "$name" "$rc" <<'PY'
import json, re, sys
from pathlib import Path
out, name, rc = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
t = (out / f"{name}.time").read_text()
wall = re.search(r"Elapsed \(wall clock\) time.*: (\S+)|real\s+(\S+)", t)
rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", t)
print(f"{name}: exit {rc}, wall {next(g for g in wall.groups() if g) if wall else '?'}, "
      f"peak RSS {int(rss.group(1)) // 1024 if rss else '?'} MiB")
try:
    s = json.loads((out / f"{name}.json").read_text())
except ValueError:
    print(f"  no JSON summary; see {out / (name + '.log')}")
    sys.exit(0)
print(f"  {s['n_questions']} questions ({s['n_page_gold']} page gold, {s['n_unanswerable']} unanswerable), "
      f"failed {s.get('n_failed')}, flow {s['seconds']}s, timings {s.get('timings')}")
for key in ("page_hit_at_1", "page_hit_at_5", "mrr", "doc_hit_rate", "answer_accuracy", "input_tokens"):
    if s.get(key):
        print(f"  {key}: " + ", ".join(f"{m}={v}" for m, v in s[key].items()))
print(f"  not_found: {s['not_found']}")
PY
}

SETS="${EVAL_SETS:-mmlongbench docugami}"
for set in $SETS; do
  case "$set" in
    docugami) run_set docugami --corpus-wide ;;
    *) run_set "$set" ;;
  esac
done
echo "outputs (JSON summaries, logs, time -v reports): $OUT" >&2
rm -rf "$HOMES"
