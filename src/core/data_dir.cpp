// The bundled data folder (data_dir.h): <executable>/../share/abliterate, else the source tree's.
#include "abl/core/data_dir.h"

#include <filesystem>
#include <system_error>

#include "abl/core/error.h"

namespace abl {
namespace fs = std::filesystem;

std::string executable_dir() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string() : exe.parent_path().string();
}

std::string bundled_data_dir() {
  // A folder counts when it holds the prompt sets (the install and the source tree both do).
  const auto holds_data = [](const fs::path& dir) {
    std::error_code ec;
    return fs::is_directory(dir / "prompts", ec);
  };
  const std::string exe = executable_dir();
  const fs::path installed = exe.empty() ? fs::path() : fs::path(exe).parent_path() / "share" / "abliterate";
  if (!installed.empty() && holds_data(installed)) return installed.lexically_normal().string();
  const fs::path source = ABL_SOURCE_INPUTS_DIR;
  if (holds_data(source)) return source.string();
  fail("the data bundled with abliterate (prompt sets, default configuration) is not found: looked in {} (an "
       "installed tree) and {} (the source tree this binary was built from); install abliterate (docs/install.md) "
       "or give the files explicitly (e.g. --good FILE --bad FILE)",
       installed.empty() ? std::string("<unknown executable folder>") : installed.string(), source.string());
}

std::string bundled_file(const std::string& relative) { return (fs::path(bundled_data_dir()) / relative).string(); }

}  // namespace abl
