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
Command directions_command();
Command baseline_command();
Command sweep_command();
Command report_command();
Command export_command();
Command run_command();
Command merge_command();
Command evaluate_command();

}  // namespace abl::app
