#!/bin/sh
# The dependency rules of vmlet (README "Layering"):
#  - only spec/yaml.c includes <yaml.h>;
#  - arch/ includes nothing from vmm/, spec/ or firmware/ internals;
#  - vmm/ (but main.c and the command files) does not include spec/
#    internals other than spec/spec.h;
#  - firmware/ includes only firmware/ headers.
set -u
cd "$(dirname "$0")/.."
bad=0
hits=$(grep -rl '#include <yaml.h>' spec vmm arch firmware 2>/dev/null | grep -v '^spec/yaml.c$')
[ -n "$hits" ] && { echo "layering: <yaml.h> outside spec/yaml.c: $hits"; bad=1; }
hits=$(grep -rlE '#include "(vmm|spec)/' arch 2>/dev/null)
[ -n "$hits" ] && { echo "layering: arch/ includes vmm/ or spec/: $hits"; bad=1; }
hits=$(grep -rlE '#include "spec/' vmm 2>/dev/null | grep -vE '^vmm/(main|cmd_[a-z_]+)\.c$' | xargs -r grep -lE '#include "spec/[^s]' )
[ -n "$hits" ] && { echo "layering: vmm/ includes spec/ internals: $hits"; bad=1; }
hits=$(grep -rlE '#include "(vmm|spec|arch)/' firmware 2>/dev/null)
[ -n "$hits" ] && { echo "layering: firmware/ includes host headers: $hits"; bad=1; }
hits=$(grep -rlE '#include <(json-c/|json\.h)' arch firmware 2>/dev/null)
[ -n "$hits" ] && { echo "layering: json-c in arch/ or firmware/: $hits"; bad=1; }
[ $bad -eq 0 ] && echo "layering: ok"
exit $bad
