#!/bin/sh
# cppcheck of the host code (spec/, arch/, vmm/): warnings and portability
# findings fail. Used by `make check` and tests/sh/style.sh.
set -u
cd "$(dirname "$0")/.."
exec cppcheck --quiet --error-exitcode=1 --enable=warning,portability \
	--suppress=missingIncludeSystem -I. spec arch vmm
