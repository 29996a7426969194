/* SPDX-License-Identifier: Apache-2.0 */
/* cli.h: what the trident subcommands share. Exit codes: 0 success,
 * 1 failure (message on stderr), 2 usage error. */
#ifndef TRD_TOOLS_CLI_H
#define TRD_TOOLS_CLI_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include <trident/trident.h>

#define CLI_OK 0
#define CLI_FAIL 1
#define CLI_USAGE 2

/* Prints "trident <cmd>: <message>" and a hint to --help; returns 2. */
int cli_usage(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Prints "trident: <what>: <trd_error_message()>"; returns 1. */
int cli_fail(const char *what, ...) __attribute__((format(printf, 1, 2)));
/* Prints a JSON value (compact=0: indented) and a newline; frees it. */
int cli_print_json(json_t *value);
/* A runtime with the default configuration; prints the error and returns NULL. */
trd_runtime_t *cli_runtime(void);
/* "2.0 GiB" */
void cli_bytes(uint64_t n, char *buf, size_t cap);
/* Prints "trident: <trd_error_message()>" (the library's message names the input); returns 1. */
int cli_error(void);
/* Digits in decimal or 0x hex, nothing else (no sign, space or octal): 1 and *out, 0 when
 * malformed, -1 when the number does not fit 64 bits. */
int cli_parse_digits(const char *s, uint64_t *out);
/* The same for the n characters at s. */
int cli_parse_digits_n(const char *s, size_t n, uint64_t *out);
/* The same, 1 only for a number that fits. */
int cli_parse_u64(const char *s, uint64_t *out);
/* Reads a whole regular file of exactly `bytes` bytes (0: any size, returned in *size) into a malloc'ed buffer with
 * a NUL after it, through base/file.h as libtrident reads its inputs: anything else is refused (a FIFO is not
 * waited on, a device not read). 0, or CLI_FAIL with "trident: <what>: <problem naming the path>" printed. */
int cli_read_file(const char *path, uint64_t bytes, char **data, uint64_t *size, const char *what);

int cmd_devices(int argc, char **argv);
int cmd_drivers(int argc, char **argv);
int cmd_options(int argc, char **argv);
int cmd_config(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_bundle(int argc, char **argv);
int cmd_info(int argc, char **argv);

#endif
