#!/usr/bin/env bash
# This story in a temporary folder (see story.md); prints where the artifacts are.
#   ./run.sh                 the loop with wild's scripted story agent
#   ./run.sh --agent claude  the same story, goal and prompts with a real agent
#   ./run.sh --direct        the sweep's runs and the analysis, without the loop
set -euo pipefail
exec "${PYTHON:-python}" -m wild.stories.run "$(dirname "$0")" "$@"
