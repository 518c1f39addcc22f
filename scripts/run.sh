#!/usr/bin/env bash
# The main job: installs what is missing, builds, and generates text with the real test model
# (stories260K from $SNAPSTREAM_MODELS or ../shared/models). Without it, a small random-weight
# model is written and used instead, and its text is meaningless.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
binary=build/server/snapstream
models=${SNAPSTREAM_MODELS:-../shared/models}
prompt=${PROMPT:-Once upon a time}

if [ -f "$models/stories260K.gguf" ]; then
  exec "$binary" generate --model "$models/stories260K.gguf" --prompt "$prompt" --max-tokens 200 "$@"
fi
echo "run: no test model in $models; using a random-weight stand-in, so the text below is meaningless" >&2
mkdir -p build/models
[ -f build/models/random-stories260k.gguf ] ||
  "$binary" make-model --shape stories260k --dtype f32 --out build/models/random-stories260k.gguf
exec "$binary" generate --model build/models/random-stories260k.gguf --prompt "$prompt" --max-tokens 64 "$@"
