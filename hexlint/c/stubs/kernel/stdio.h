/* hexlint stand-in: declaration-only, written from the names ggml-hexagon uses (not the Hexagon SDK or libc header). */
#ifndef HEXLINT_STUB_STDIO_H
#define HEXLINT_STUB_STDIO_H
#include <stddef.h>
#include <stdarg.h>
#ifdef __cplusplus
extern "C" {
#endif
typedef struct _hexlint_FILE FILE;
extern FILE *stdin;
extern FILE *stdout;
extern FILE *stderr;
#define EOF (-1)
#define SEEK_SET 0
#define SEEK_CUR 1
#define SEEK_END 2
#define BUFSIZ 1024
int printf(const char *restrict format, ...);
int fprintf(FILE *restrict stream, const char *restrict format, ...);
int sprintf(char *restrict out, const char *restrict format, ...);
int snprintf(char *restrict out, size_t size, const char *restrict format, ...);
int vprintf(const char *restrict format, va_list args);
int vfprintf(FILE *restrict stream, const char *restrict format, va_list args);
int vsprintf(char *restrict out, const char *restrict format, va_list args);
int vsnprintf(char *restrict out, size_t size, const char *restrict format, va_list args);
int sscanf(const char *restrict s, const char *restrict format, ...);
int puts(const char *s);
int putchar(int c);
int fputs(const char *restrict s, FILE *restrict stream);
int fputc(int c, FILE *stream);
FILE *fopen(const char *restrict path, const char *restrict mode);
int fclose(FILE *stream);
size_t fread(void *restrict out, size_t size, size_t count, FILE *restrict stream);
size_t fwrite(const void *restrict data, size_t size, size_t count, FILE *restrict stream);
int fflush(FILE *stream);
int fseek(FILE *stream, long offset, int whence);
long ftell(FILE *stream);
char *fgets(char *restrict out, int size, FILE *restrict stream);
#ifdef __cplusplus
}
#endif
#endif
