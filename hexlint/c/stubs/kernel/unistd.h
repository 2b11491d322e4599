/* hexlint stand-in: declaration-only, written from the names ggml-hexagon uses (not the Hexagon SDK or libc header). */
#ifndef HEXLINT_STUB_UNISTD_H
#define HEXLINT_STUB_UNISTD_H
#include <stddef.h>
typedef long ssize_t;
unsigned sleep(unsigned seconds);
int usleep(unsigned long microseconds);
#endif
