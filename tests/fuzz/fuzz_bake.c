/* libFuzzer target: whole bakes of small adversarial levels (any triangles, degenerate or not, repeated vertices,
 * slivers, vertical walls, stacked floors), under every partition, solo and tiled, with varied config, a volume
 * and off-mesh links. A bake either fails with a status that names a bad input or gives a navmesh that answers
 * every query (fuzz_query_navmesh), bakes again to the same bytes, and survives save and load (fuzz_common.h). */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    if (size <= 4096)
        fuzz_check_bake(data, size);
    return 0;
}
