#!/usr/bin/env bash
# Fails when a file under src/<folder>/ imports `../<other>/...` and <other> is not in
# <folder>'s "may import" column of the "Layers" table in docs/ARCHITECTURE.md, naming the
# file and line. Also fails when a folder under src/ has no row, and when the table itself has
# a loop (a layer that may import one that may import it back): lower layers never import
# higher ones.
#
# How the column reads: folder names separated by commas; a parenthesis is a note ("loop (its
# `Mode`)"); "std" alone means no other folder; "all of the above" means every folder in the
# rows above; "all" means every other folder.
set -euo pipefail
cd "$(dirname "$0")/.."
doc=docs/ARCHITECTURE.md

# One line per row: the folder, then the folders it may import.
table="$(awk '
    /^## / { in_layers = ($0 ~ /^## Layers/); next }
    !in_layers || !/^\| `[a-z_0-9]+\/` \|/ { next }
    {
        split($0, cells, "|")
        folder = cells[2]; gsub(/[ `\/]/, "", folder)
        may = cells[4]
        gsub(/\([^)]*\)/, "", may); gsub(/`/, "", may)
        gsub(/^ +| +$/, "", may)
        line = folder
        if (may == "all of the above") {
            for (i = 1; i <= count; i++) line = line " " order[i]
        } else if (may == "all") {
            line = line " *"
        } else {
            n = split(may, names, ",")
            for (i = 1; i <= n; i++) {
                name = names[i]; gsub(/[ \/]/, "", name)
                if (name != "std" && name != "") line = line " " name
            }
        }
        order[++count] = folder
        print line
    }
' "$doc")"
if [ -z "$table" ]; then
    echo "check_layers: no Layers table found in $doc" >&2
    exit 1
fi
folders="$(cut -d' ' -f1 <<<"$table")"

# "all" stands for every folder but the row's own.
expanded="$(while read -r folder allowed; do
    if [ "$allowed" = "*" ]; then
        allowed="$(grep -vx "$folder" <<<"$folders" | tr '\n' ' ')"
    fi
    echo "$folder $allowed"
done <<<"$table")"

status=0
for other in $(cut -d' ' -f2- <<<"$expanded" | tr ' ' '\n' | sort -u); do
    if ! grep -qx "$other" <<<"$folders"; then
        echo "check_layers: $doc: the Layers table names $other/, which has no row" >&2
        status=1
    fi
done

# The table: every "may import" is an edge; tsort refuses a graph with a loop.
if ! while read -r folder allowed; do
    for other in $allowed; do echo "$folder $other"; done
done <<<"$expanded" | tsort >/dev/null 2>&1; then
    echo "check_layers: $doc: the Layers table has a loop (some layer may import one that may import it)" >&2
    status=1
fi

for dir in src/*/; do
    folder="$(basename "$dir")"
    allowed="$(awk -v f="$folder" '$1 == f { $1 = ""; print }' <<<"$expanded")"
    if ! grep -qx "$folder" <<<"$folders"; then
        echo "check_layers: src/$folder/ has no row in the Layers table of $doc" >&2
        status=1
        continue
    fi
    while IFS=: read -r file line import; do
        # The path the import names, from the importing file's own folder (a file in a
        # subfolder, such as src/js/builtins/, reaches its own layer with `../`).
        target="${import#@import(\"}"
        resolved="$(realpath -m --relative-to=src "$(dirname "$file")/${target%\"}")"
        case "$resolved" in
            ../*)
                echo "$file:$line: $folder/ imports ${target%\"}, which is outside src/" >&2
                status=1
                continue
                ;;
            */*) other="${resolved%%/*}" ;;
            *)
                echo "$file:$line: $folder/ imports ${target%\"}, which is in no layer" >&2
                status=1
                continue
                ;;
        esac
        [ "$other" = "$folder" ] && continue
        if ! grep -qw -- "$other" <<<"$allowed"; then
            echo "$file:$line: $folder/ imports $other/, which the Layers table in $doc does not allow" \
                "($folder/ may import:${allowed:- std only})" >&2
            status=1
        fi
    done < <(grep -rnoH --include='*.zig' '@import("\.\./[^"]*"' "$dir" || true)
done

while IFS=: read -r file line _; do
    echo "$file:$line: imports aws_lc, AWS-LC's API, which only src/tls/ may import" >&2
    status=1
done < <(grep -rnH --include='*.zig' '@import("aws_lc")' src | grep -v '^src/tls/' || true)

while IFS=: read -r file line _; do
    echo "$file:$line: imports nghttp2, nghttp2's API, which only src/h2/ may import" >&2
    status=1
done < <(grep -rnH --include='*.zig' '@import("nghttp2")' src | grep -v '^src/h2/' || true)

while IFS=: read -r file line _; do
    echo "$file:$line: imports zlib, zlib's API, which only src/zlib/ may import" >&2
    status=1
done < <(grep -rnH --include='*.zig' '@import("zlib")' src | grep -v '^src/zlib/' || true)
exit $status
