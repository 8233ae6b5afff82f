#!/usr/bin/env bash
# This story in a temporary folder (see story.md); prints where the artifacts are.
#   ./run.sh                 the loop with the scripted story agent (examples/wild_stories)
#   ./run.sh --agent claude  the same story, goal and prompts with a real agent
#   ./run.sh --direct        the sweep's runs and the analysis, without the loop
#   ./run.sh --scale gpu     the story's GPU size (CUDA when present)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# The story kit (wild_stories: the scripted agent, the analyses) lives beside the stories.
export PYTHONPATH="$(dirname "$here")${PYTHONPATH:+:$PYTHONPATH}"
exec "${PYTHON:-python}" -m wild_stories.run "$here" "$@"
