/* PLACEHOLDER: replaced by the real subcommand. */
#include "cli.h"
int cli_cmd_features(int argc, char **argv)
{
    (void)argc;
    return cli_usage_error(argv[0], "not implemented yet");
}
