// Hand-written packets for the decoder oracle: forms that compiled C rarely produces. Our own code, assembled by
// llvm-mc-22 into the decoder test libraries (tests/data/decoder/build.sh); it is never executed.
	.text
	.globl	asm_forms
	.p2align	4
	.type	asm_forms,@function
asm_forms:
	{ allocframe(#64) }
	{ memd(r29+#8) = r17:16; memw(r29+#4) = r18 }
	{ r1 = memw(r29+#4); r17:16 = memd(r29+#8) }
	{ memd(r30+#-16) = r21:20 }
	{ r21:20 = memd(r30+#-16) }
	{ r2 = add(r29,#24); r3 = r29 }
	{ r5:4 = combine(r29,r30) }
	{ r6 = add(r30,##-70000) }
	{ loop0(.Lhw0,#12) }
.Lhw0:
	{ r2 = add(r2,#1); r3 = add(r3,#2) }
	{ r4 = add(r4,#1); nop } :endloop0
	{ loop1(.Louter,r7) }
.Louter:
	{ loop0(.Linner,#3) }
.Linner:
	{ r8 = add(r8,#1); r9 = add(r9,#1) } :endloop0
	{ r10 = add(r10,#1); r11 = add(r11,#1); nop } :endloop1
	{ loop1(.Lboth,#2) }
.Lboth:
	{ loop0(.Lboth,#5) }
	{ r12 = add(r12,#1); r13 = add(r13,#1); nop } :endloop01
	{ p3 = sp1loop0(.Lsp1,#8) }
.Lsp1:
	{ r14 = add(r14,#1); nop } :endloop0
	{ p3 = sp2loop0(.Lsp2,r1) }
.Lsp2:
	{ r14 = add(r14,#2); nop } :endloop0
	{ p3 = sp3loop0(.Lsp3,#100) }
.Lsp3:
	{ r14 = add(r14,#3); nop } :endloop0
	{ r1 = add(r1,#1) }
	{ if (cmp.eq(r1.new,#0)) jump:nt .Lnv
	  r1 = memw(r2+#0) }
	{ r3 = add(r3,#1)
	  if (!cmp.gt(r3.new,r4)) jump:t .Lnv }
	{ r5 = memw(r2+#4)
	  if (cmp.gtu(r5.new,#7)) jump:nt .Lnv }
.Lnv:
	{ p0 = cmp.eq(r1,#5); if (p0.new) jump:nt .Lnv }
	{ p1 = cmp.gt(r1,r2); if (!p1.new) jump:t .Lnv }
	{ if (p0) call asm_target }
	{ if (!p1) call asm_target }
	{ if (p0.new) jump:t .Lnv; p0 = cmp.eq(r2,r3) }
	{ if (r1!=#0) jump:nt .Lnv }
	{ if (r1>=#0) jump:t .Lnv }
	{ r1 = #7; jump .Lnv }
	{ r2 = r3; jump .Lnv }
	{ callr r4 }
	{ if (p0) callr r4 }
	{ if (!p0) jumpr r5 }
	{ r1 = memb(r2++#1) }
	{ r1 = memh(r2++#-2) }
	{ r3:2 = memd(r4++#8) }
	{ memw(r5++#4) = r6 }
	{ memd(r5++#-8) = r7:6 }
	{ r1 = memw(r2+r3<<#2) }
	{ memh(r2+r3<<#1) = r4 }
	{ if (p0) r1 = memw(r29+#8) }
	{ if (!p1) memw(r29+#12) = r1 }
	{ if (p2) memd(r30+#-8) = r1:0 }
	{ memw(r29+#16) = #-3 }
	{ memb(r29+#3) = #7 }
	{ memw(r29+#8) += #1 }
	{ memw(r29+#8) -= r2 }
	{ r1 = memw(gp+#16) }
	{ memw(gp+#20) = r1 }
	{ r1 = memw(##0x12340) }
	{ memw(##0x12340) = r1 }
	{ r1 = memw(r2=##0x12340) }
	{ r1 = memw(r3<<#2+##0x12340) }
	{ if (p0) r1 = memw(##0x12340) }
	{ r1 = memw(r2++m0) }
	{ r1 = memw(r2++m1:brev) }
	{ r1 = memw(r2++#4:circ(m0)) }
	{ v1 = vmem(r29+#1) }
	{ vmem(r29+#-2) = v1 }
	{ v2 = vmemu(r3+#1) }
	{ vmemu(r3+#-1) = v2 }
	{ v3 = vmem(r4++#1) }
	{ vmem(r4++#-1) = v3 }
	{ v4 = vmem(r5++m0) }
	{ v5 = vmem(r6+#2):nt }
	{ vmem(r6+#3):nt = v5 }
	{ v6.tmp = vmem(r7+#0); v7.w = vadd(v6.w,v6.w) }
	{ v8.cur = vmem(r7+#1); v9.w = vadd(v8.w,v8.w) }
	{ v10.w = vadd(v1.w,v2.w); vmem(r8+#0) = v10.new }
	{ if (p0) vmem(r29+#1) = v1 }
	{ if (!q1) vmem(r29+#2) = v2 }
	{ if (p1) v3 = vmem(r29+#-1) }
	{ if (!p2) vmemu(r3+#1) = v4 }
	{ r1:0 = convert_sf2df(r2) }
	{ r1:0 = dfadd(r3:2,r5:4) }
	{ r1:0 = dfsub(r3:2,r5:4) }
	{ r1:0 = dfmpyfix(r3:2,r5:4) }
	{ r1:0 = dfmpyll(r3:2,r5:4) }
	{ r1:0 += dfmpylh(r3:2,r5:4) }
	{ r1:0 += dfmpyhh(r3:2,r5:4) }
	{ p0 = dfcmp.eq(r1:0,r3:2) }
	{ p0 = dfcmp.uo(r1:0,r3:2) }
	{ r1 = convert_df2sf(r3:2) }
	{ r1:0 = convert_w2df(r2) }
	{ r1:0 = convert_uw2df(r2) }
	{ r1:0 = convert_d2df(r3:2) }
	{ r1 = convert_df2uw(r3:2):chop }
	{ r1:0 = convert_df2d(r3:2) }
	{ r1 = p0 }
	{ p0 = r1 }
	{ r1 = add(pc,##asm_data@PCREL) }
	{ r1.h = #4660 }
	{ r1.l = #22136 }
	{ if (p0) r1 = add(r29,#8) }
	{ if (!p0.new) r2 = r3; p0 = cmp.eq(r1,#0) }
	{ r1:0 = combine(#1,#2) }
	{ r1 = vextract(v2,r3) }
	{ r17:16 = memd(r29+#8); dealloc_return }
	{ if (p0) dealloc_return }
	{ deallocframe }
	{ jumpr r31 }
	.size	asm_forms, .-asm_forms

	.globl	asm_target
	.p2align	4
	.type	asm_target,@function
asm_target:
	{ jumpr r31 }
	.size	asm_target, .-asm_target

	.data
	.p2align 2
asm_data:
	.word 0
