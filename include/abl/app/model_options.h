// Options shared by the subcommands that read a model folder, and how a folder is resolved.
#pragma once
#include <string>

#include "abl/app/cli.h"

namespace abl::app {

// --model (section [model]).
void declare_model_path_option(OptionSet& o);
// --model, --chat-template, --system-prompt, --response-prefix (section [model]).
void declare_model_options(OptionSet& o);

// DIR/tokenizer.json, or the path itself when it names a .json file; errors name the folder.
std::string tokenizer_path(const std::string& model);

}  // namespace abl::app
