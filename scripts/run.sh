#!/usr/bin/env bash
# The main job: installs what is missing, builds, and serves the OpenAI-compatible API with the
# real test model (stories260K from $SNAPSTREAM_MODELS or ../shared/models) on
# http://127.0.0.1:8000 ($HOST and $PORT change that; further arguments go to `snapstream serve`).
# Without the test model, a small random-weight model is written and served instead, and its
# text is meaningless. Stop it with Ctrl-C.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
binary=build/bin/snapstream
models=${SNAPSTREAM_MODELS:-../shared/models}
model=$models/stories260K.gguf

if [ ! -f "$model" ]; then
  echo "run: no test model in $models; serving a random-weight stand-in, so its text is meaningless" >&2
  mkdir -p build/models
  model=build/models/random-stories260k.gguf
  [ -f "$model" ] || "$binary" make-model --shape stories260k --dtype f32 --out "$model"
fi
exec "$binary" serve --model "$model" --host "${HOST:-127.0.0.1}" --port "${PORT:-8000}" "$@"
