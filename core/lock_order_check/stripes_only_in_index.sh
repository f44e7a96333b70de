#!/bin/bash
# Checks that no code outside the object index names a stripe: only
# core/object_index.*, the stripe layouts (core/object_table.*,
# core/group_table.*) and the layouts' own test may reach into a Shard or
# pick one. Usage: stripes_only_in_index.sh SOURCE_DIR
set -u
src=$1
found=$(cd "$src" && grep -rnE 'ShardFor|\.shard\(|::Shard\b|shard_count\(\)' \
    --include='*.cc' --include='*.h' \
    base protocol core rpc client node admin_server metrics daemon cli \
    transport bench tests python 2>/dev/null |
  grep -vE '^core/(object_index|object_table|group_table)\.|^core/group_table_test\.cc')
if [ -n "$found" ]; then
  echo "FAIL: stripes named outside the object index (use ObjectIndex):"
  echo "$found"
  exit 1
fi
echo "stripes are named only inside the object index"
