// EXPECT: tensorlev::pack: the storage must be growable
// Borrowed arrays belong to someone else: pack cannot fill them. The twin
// packs into owning storage with 64-bit positions and 32-bit coordinates.
#include <cstdint>

#include "tensorlev/tensorlev.hpp"
int main() {
  using namespace tensorlev;
  coordinate_list<double, std::int64_t> list({3, 3});
#ifdef TL_SHOULD_FAIL
  const auto t = pack<csr, borrowed<>>(list);
#else
  const auto t = pack<csr, owning<std::int64_t, std::int32_t>>(list);
#endif
  return static_cast<int>(t.stored());
}
