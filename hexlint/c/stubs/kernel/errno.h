/* hexlint stand-in: declaration-only, written from the names ggml-hexagon uses (not the Hexagon SDK or libc header). */
#ifndef HEXLINT_STUB_ERRNO_H
#define HEXLINT_STUB_ERRNO_H
extern int *__errno_location(void);
#define errno (*__errno_location())
#define EPERM 1
#define ENOENT 2
#define EINTR 4
#define EIO 5
#define EAGAIN 11
#define ENOMEM 12
#define EACCES 13
#define EBUSY 16
#define EEXIST 17
#define EINVAL 22
#define ENOSPC 28
#define ERANGE 34
#define ENOSYS 38
#define ETIMEDOUT 110
#endif
