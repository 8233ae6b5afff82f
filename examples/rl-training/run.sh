#!/usr/bin/env bash
# This story in a temporary folder (see story.md); prints where the artifacts are.
#   ./run.sh                 the loop with the scripted story agent (examples/wild_stories)
#   ./run.sh --agent claude  the same story, goal and prompts with a real agent
#   ./run.sh --direct        the sweep's runs and the analysis, without the loop
#   ./run.sh --scale gpu     the story's GPU size (CUDA when present)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# The story kit (wild_stories: the scripted agent, the analyses) lives beside the stories; a
# story folder copied elsewhere uses the kit wild ships (wild.paths.STORY_KIT_DIR).
kit="$(dirname "$here")"
if [ ! -d "$kit/wild_stories" ]; then
  kit="$("${PYTHON:-python}" -c 'from wild.paths import STORY_KIT_DIR; print(STORY_KIT_DIR.parent)')"
fi
export PYTHONPATH="$kit${PYTHONPATH:+:$PYTHONPATH}"
exec "${PYTHON:-python}" -m wild_stories.run "$here" "$@"
