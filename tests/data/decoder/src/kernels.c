/* Small programs of our own for the decoder oracle: HVX loops, spills, doubles, divisions, calls, hardware loops. */
#include <hexagon_types.h>
#include <hexagon_protos.h>
#include <stdint.h>

typedef long HVX_Vector_t __attribute__((__vector_size__(128)));

extern void sink(int value);
extern float helper_f(float value);
extern double helper_d(double value);

void hvx_add(HVX_Vector *restrict dst, const HVX_Vector *restrict a, const HVX_Vector *restrict b, int n) {
    for (int i = 0; i < n; i++) {
        dst[i] = Q6_Vw_vadd_VwVw(a[i], b[i]);
    }
}

void hvx_unaligned(uint8_t *dst, const uint8_t *src, int n) {
    for (int i = 0; i < n; i++) {
        HVX_Vector v = *(const HVX_UVector *)(src + i * 128 + 3);
        *(HVX_UVector *)(dst + i * 128 + 5) = Q6_Vb_vadd_VbVb(v, v);
    }
}

/* Many live vectors across a call: forces vector spills to the stack. */
void hvx_spill(HVX_Vector *dst, const HVX_Vector *src, int n) {
    HVX_Vector acc[24];
    for (int k = 0; k < 24; k++) {
        acc[k] = src[k];
    }
    for (int i = 0; i < n; i++) {
        sink(i);
        for (int k = 0; k < 24; k++) {
            acc[k] = Q6_Vw_vadd_VwVw(acc[k], src[(i + k) & 31]);
        }
    }
    for (int k = 0; k < 24; k++) {
        dst[k] = acc[k];
    }
}

/* Many live scalars across a call: scalar spills and duplex stack stores/loads. */
int scalar_spill(const int *p, int n) {
    int a = p[0], b = p[1], c = p[2], d = p[3], e = p[4], f = p[5], g = p[6], h = p[7];
    int i2 = p[8], j = p[9], k = p[10], l = p[11], m = p[12], o = p[13], q = p[14], r = p[15];
    for (int i = 0; i < n; i++) {
        sink(a + b * i);
        a += c; b ^= d; c += e; d -= f; e += g; f ^= h; g += i2; h -= j; i2 += k; j ^= l; k += m; l -= o; m += q; o ^= r;
    }
    return a + b + c + d + e + f + g + h + i2 + j + k + l + m + o + q + r;
}

float promote(float x, int n) {
    float acc = 0.0f;
    for (int i = 0; i < n; i++) {
        acc += x * 0.5 + (double)i;
    }
    return acc;
}

double doubles(double a, double b, int n) {
    double s = 0.0;
    for (int i = 0; i < n; i++) {
        s = s * a + b - (double)i;
        if (s > a) {
            s = s / b;
        }
    }
    return s + helper_d(s) + (float)s;
}

int divide(const int *p, int n, int d) {
    int s = 0;
    for (int i = 0; i < n; i++) {
        s += p[i] / d + (unsigned)p[i] % (unsigned)(d + 1);
    }
    return s;
}

long long divide64(long long a, long long b) {
    return a / b + a % (b + 3);
}

float fdivide(float a, float b, int n) {
    float s = 0;
    for (int i = 0; i < n; i++) {
        s += a / (b + i);
    }
    return s;
}

int nested(const int *p, int rows, int cols) {
    int s = 0;
    for (int r = 0; r < rows; r++) {
        for (int c = 0; c < cols; c++) {
            s += p[r * cols + c] * c;
        }
    }
    return s;
}

int with_call(const int *p, int n) {
    int s = 0;
    for (int i = 0; i < n; i++) {
        s += p[i];
        sink(s);
    }
    return s;
}

static int table[4096];
int global_access(int i) {
    table[i & 4095] += 7;
    return table[(i + 3) & 4095] + table[100];
}

int big_frame(int n) {
    volatile int local[3000];
    for (int i = 0; i < 3000; i++) {
        local[i] = i * n;
    }
    return local[n % 3000] + local[2999];
}

void bytes_halves(int8_t *b, uint8_t *ub, int16_t *h, uint16_t *uh, long long *d, int n) {
    for (int i = 0; i < n; i++) {
        b[i] = (int8_t)(ub[i] + h[i]);
        uh[i] = (uint16_t)(uh[i] + d[i]);
        d[i] = d[i] * 3 + b[i];
    }
}

typedef int (*callback_t)(int);
int indirect(callback_t cb, int n) {
    int s = 0;
    for (int i = 0; i < n; i++) {
        s += cb(i);
    }
    return s;
}

void hvx_predicated(HVX_Vector *dst, const HVX_Vector *src, int n, int flag) {
    for (int i = 0; i < n; i++) {
        HVX_Vector v = src[i];
        if (flag & i) {
            dst[i] = v;
        }
    }
}

void hvx_reduce(int32_t *out, const HVX_Vector *src, int n) {
    HVX_Vector acc = Q6_V_vzero();
    for (int i = 0; i < n; i++) {
        acc = Q6_Vw_vadd_VwVw(acc, Q6_Vw_vmpyie_VwVuh(src[i], src[i]));
    }
    HVX_Vector tmp[1];
    tmp[0] = acc;
    *out = ((int32_t *)tmp)[0] + ((int32_t *)tmp)[31];
}
