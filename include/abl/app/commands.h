// The subcommands, one source file each (src/app/cmd_<name>.cpp).
#pragma once
#include "abl/app/cli.h"

namespace abl::app {

Command info_command();
Command tokenize_command();
Command prompts_command();
Command generate_command();
Command residuals_command();
Command plan_command();

}  // namespace abl::app
