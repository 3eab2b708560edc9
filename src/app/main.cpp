// Entry point: everything lives in abl::app so that tests can drive the same code.
#include "abl/app/cli.h"

int main(int argc, char** argv) { return abl::app::main_entry(argc, argv); }
