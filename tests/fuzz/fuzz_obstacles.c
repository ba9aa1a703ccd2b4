/* libFuzzer target: obstacles added, moved and removed in any order on a tile cache; every incremental rebuild
 * must give the bytes of a build from scratch with the same obstacles (fuzz_check_obstacles, fuzz_common.h). */
#include "fuzz_common.h"
#include "world.h"

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    static nb_obj world;
    static int made;
    if (!made) {
        FUZZ_EXPECT(nb_world_generate(1, 3000, &world) == 0, "world");
        made = 1;
    }
    if (size <= 1024)
        fuzz_check_obstacles(data, size, &world);
    return 0;
}
