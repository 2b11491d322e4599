/* hexlint stand-in: declaration-only, written from the names ggml-hexagon uses and the public Hexagon SDK docs (not the SDK header). */
#ifndef HEXLINT_STUB_QURT_THREAD_H
#define HEXLINT_STUB_QURT_THREAD_H
#ifdef __cplusplus
extern "C" {
#endif
#define QURT_THREAD_ATTR_NAME_MAXLEN 16
#define QURT_HIGHEST_PRIO 1
#define QURT_LOWEST_PRIO 254
typedef unsigned int qurt_thread_t;
typedef struct {
    char name[QURT_THREAD_ATTR_NAME_MAXLEN];
    unsigned short priority;
    unsigned int stack_size;
    void *stack_addr;
} qurt_thread_attr_t;
void qurt_thread_attr_init(qurt_thread_attr_t *attr);
void qurt_thread_attr_set_name(qurt_thread_attr_t *attr, const char *name);
void qurt_thread_attr_set_priority(qurt_thread_attr_t *attr, unsigned short priority);
void qurt_thread_attr_set_stack_size(qurt_thread_attr_t *attr, unsigned int stack_size);
void qurt_thread_attr_set_stack_addr(qurt_thread_attr_t *attr, void *stack_addr);
int qurt_thread_create(qurt_thread_t *thread_id, qurt_thread_attr_t *attr, void (*entrypoint)(void *), void *arg);
void qurt_thread_exit(int status);
int qurt_thread_join(unsigned int tid, int *status);
qurt_thread_t qurt_thread_get_id(void);
int qurt_thread_get_priority(qurt_thread_t threadid);
int qurt_thread_set_priority(qurt_thread_t threadid, unsigned short newprio);
int qurt_thread_get_name(char *name, unsigned char max_len);
#ifdef __cplusplus
}
#endif
#endif
