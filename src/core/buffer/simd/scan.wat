;; WebAssembly SIMD kernels of RetrievalIndex's exact scan (src/core/buffer/retrieval.ts):
;;   score   f32 dot products of listed rows with the query (f32x4 multiply + add);
;;   score8  exact i32 dot products of listed int8 sketch rows with an int16 query
;;           (i32x4.dot_i16x8_s), the cheap first pass that drops most rows;
;;   sum     a sum of floats: the benchmark's SIMD memory-bandwidth reference.
;;
;; Compiled by scripts/build-wasm.ts (wabt) into scan-wasm.ts, the bytes the app embeds; edit
;; this file, then run `node --import tsx scripts/build-wasm.ts`. Keep the binary under 4 KB:
;; Chromium compiles a module synchronously on the main thread only up to that size.
;;
;; The memory is imported ("env" "memory"): the index owns it and keeps its whole matrix in it,
;; so a query scans the rows in place. All pointers are byte offsets into that memory (wasm32:
;; row * stride * 4 wraps like the unsigned addresses do); f32 rows are 16-byte aligned,
;; `stride` floats apart, `stride` a multiple of 4 (rows are padded with zeros to it).
(module
  (import "env" "memory" (memory 1))

  ;; out[i] = dot(q, row list[i]) for i in [0, n): the rows that passed the caller's filters,
  ;; `list` holding row numbers (i32) of the matrix at `m`. Four rows at a time share each query
  ;; load: one f32x4 accumulator per row (four independent add chains), 16 bytes a step, then a
  ;; transposing pairwise reduction writes the four scores as one v128. Leftover rows (n % 4)
  ;; one at a time with the same reduction order: score = (l0 + l2) + (l1 + l3) of the lanes.
  (func (export "score") (param $q i32) (param $m i32) (param $list i32) (param $n i32) (param $stride i32) (param $out i32)
    (local $rowBytes i32) (local $d i32) (local $m0 i32) (local $m1 i32) (local $m2 i32) (local $m3 i32)
    (local $qv v128) (local $a0 v128) (local $a1 v128) (local $a2 v128) (local $a3 v128) (local $t0 v128) (local $t1 v128)
    (local.set $rowBytes (i32.shl (local.get $stride) (i32.const 2)))
    (if (i32.eqz (local.get $rowBytes)) (then (return)))
    (block $done4
      (loop $rows4
        (br_if $done4 (i32.lt_u (local.get $n) (i32.const 4)))
        (local.set $m0 (i32.add (local.get $m) (i32.mul (i32.load offset=0 (local.get $list)) (local.get $rowBytes))))
        (local.set $m1 (i32.add (local.get $m) (i32.mul (i32.load offset=4 (local.get $list)) (local.get $rowBytes))))
        (local.set $m2 (i32.add (local.get $m) (i32.mul (i32.load offset=8 (local.get $list)) (local.get $rowBytes))))
        (local.set $m3 (i32.add (local.get $m) (i32.mul (i32.load offset=12 (local.get $list)) (local.get $rowBytes))))
        (local.set $a0 (v128.const i64x2 0 0))
        (local.set $a1 (v128.const i64x2 0 0))
        (local.set $a2 (v128.const i64x2 0 0))
        (local.set $a3 (v128.const i64x2 0 0))
        (local.set $d (i32.const 0))
        (loop $step
          (local.set $qv (v128.load (i32.add (local.get $q) (local.get $d))))
          (local.set $a0 (f32x4.add (local.get $a0) (f32x4.mul (v128.load (i32.add (local.get $m0) (local.get $d))) (local.get $qv))))
          (local.set $a1 (f32x4.add (local.get $a1) (f32x4.mul (v128.load (i32.add (local.get $m1) (local.get $d))) (local.get $qv))))
          (local.set $a2 (f32x4.add (local.get $a2) (f32x4.mul (v128.load (i32.add (local.get $m2) (local.get $d))) (local.get $qv))))
          (local.set $a3 (f32x4.add (local.get $a3) (f32x4.mul (v128.load (i32.add (local.get $m3) (local.get $d))) (local.get $qv))))
          (local.set $d (i32.add (local.get $d) (i32.const 16)))
          (br_if $step (i32.lt_u (local.get $d) (local.get $rowBytes))))
        ;; t0 = [a0.0+a0.2, a0.1+a0.3, a1.0+a1.2, a1.1+a1.3], t1 likewise for a2, a3
        (local.set $t0 (f32x4.add
          (i8x16.shuffle 0 1 2 3 4 5 6 7 16 17 18 19 20 21 22 23 (local.get $a0) (local.get $a1))
          (i8x16.shuffle 8 9 10 11 12 13 14 15 24 25 26 27 28 29 30 31 (local.get $a0) (local.get $a1))))
        (local.set $t1 (f32x4.add
          (i8x16.shuffle 0 1 2 3 4 5 6 7 16 17 18 19 20 21 22 23 (local.get $a2) (local.get $a3))
          (i8x16.shuffle 8 9 10 11 12 13 14 15 24 25 26 27 28 29 30 31 (local.get $a2) (local.get $a3))))
        ;; [t0.0+t0.1, t0.2+t0.3, t1.0+t1.1, t1.2+t1.3]: the four scores
        (v128.store (local.get $out) (f32x4.add
          (i8x16.shuffle 0 1 2 3 8 9 10 11 16 17 18 19 24 25 26 27 (local.get $t0) (local.get $t1))
          (i8x16.shuffle 4 5 6 7 12 13 14 15 20 21 22 23 28 29 30 31 (local.get $t0) (local.get $t1))))
        (local.set $list (i32.add (local.get $list) (i32.const 16)))
        (local.set $out (i32.add (local.get $out) (i32.const 16)))
        (local.set $n (i32.sub (local.get $n) (i32.const 4)))
        (br $rows4)))
    (block $done1
      (loop $rows1
        (br_if $done1 (i32.eqz (local.get $n)))
        (local.set $m0 (i32.add (local.get $m) (i32.mul (i32.load (local.get $list)) (local.get $rowBytes))))
        (local.set $a0 (v128.const i64x2 0 0))
        (local.set $d (i32.const 0))
        (loop $step1
          (local.set $a0 (f32x4.add (local.get $a0) (f32x4.mul
            (v128.load (i32.add (local.get $m0) (local.get $d)))
            (v128.load (i32.add (local.get $q) (local.get $d))))))
          (local.set $d (i32.add (local.get $d) (i32.const 16)))
          (br_if $step1 (i32.lt_u (local.get $d) (local.get $rowBytes))))
        (local.set $t0 (f32x4.add (local.get $a0)
          (i8x16.shuffle 8 9 10 11 12 13 14 15 0 1 2 3 4 5 6 7 (local.get $a0) (local.get $a0))))
        (f32.store (local.get $out) (f32.add
          (f32x4.extract_lane 0 (local.get $t0)) (f32x4.extract_lane 1 (local.get $t0))))
        (local.set $list (i32.add (local.get $list) (i32.const 4)))
        (local.set $out (i32.add (local.get $out) (i32.const 4)))
        (local.set $n (i32.sub (local.get $n) (i32.const 1)))
        (br $rows1))))

;; out[i] = dot(q, sketch row list[i]) for i in [0, n), exactly, in i32: the sketch's rows are
  ;; `stride` i8 (stride a multiple of 16), q is `stride` i16. Each i8x16 step is widened to two
  ;; i16x8 halves and multiplied-and-paired with i32x4.dot_i16x8_s; four rows at a time share
  ;; the query loads, then the same transposing reduction as `score`. The caller bounds |q| so
  ;; that 127 · max|q| · stride < 2^31: no partial sum can overflow.
  (func (export "score8") (param $q i32) (param $m i32) (param $list i32) (param $n i32) (param $stride i32) (param $out i32)
    (local $d i32) (local $qp i32) (local $m0 i32) (local $m1 i32) (local $m2 i32) (local $m3 i32)
    (local $qlo v128) (local $qhi v128) (local $v v128)
    (local $a0 v128) (local $a1 v128) (local $a2 v128) (local $a3 v128) (local $t0 v128) (local $t1 v128)
    (if (i32.eqz (local.get $stride)) (then (return)))
    (block $done4
      (loop $rows4
        (br_if $done4 (i32.lt_u (local.get $n) (i32.const 4)))
        (local.set $m0 (i32.add (local.get $m) (i32.mul (i32.load offset=0 (local.get $list)) (local.get $stride))))
        (local.set $m1 (i32.add (local.get $m) (i32.mul (i32.load offset=4 (local.get $list)) (local.get $stride))))
        (local.set $m2 (i32.add (local.get $m) (i32.mul (i32.load offset=8 (local.get $list)) (local.get $stride))))
        (local.set $m3 (i32.add (local.get $m) (i32.mul (i32.load offset=12 (local.get $list)) (local.get $stride))))
        (local.set $a0 (v128.const i64x2 0 0))
        (local.set $a1 (v128.const i64x2 0 0))
        (local.set $a2 (v128.const i64x2 0 0))
        (local.set $a3 (v128.const i64x2 0 0))
        (local.set $d (i32.const 0))
        (local.set $qp (local.get $q))
        (loop $step
          (local.set $qlo (v128.load offset=0 (local.get $qp)))
          (local.set $qhi (v128.load offset=16 (local.get $qp)))
          (local.set $v (v128.load (i32.add (local.get $m0) (local.get $d))))
          (local.set $a0 (i32x4.add (local.get $a0) (i32x4.add
            (i32x4.dot_i16x8_s (i16x8.extend_low_i8x16_s (local.get $v)) (local.get $qlo))
            (i32x4.dot_i16x8_s (i16x8.extend_high_i8x16_s (local.get $v)) (local.get $qhi)))))
          (local.set $v (v128.load (i32.add (local.get $m1) (local.get $d))))
          (local.set $a1 (i32x4.add (local.get $a1) (i32x4.add
            (i32x4.dot_i16x8_s (i16x8.extend_low_i8x16_s (local.get $v)) (local.get $qlo))
            (i32x4.dot_i16x8_s (i16x8.extend_high_i8x16_s (local.get $v)) (local.get $qhi)))))
          (local.set $v (v128.load (i32.add (local.get $m2) (local.get $d))))
          (local.set $a2 (i32x4.add (local.get $a2) (i32x4.add
            (i32x4.dot_i16x8_s (i16x8.extend_low_i8x16_s (local.get $v)) (local.get $qlo))
            (i32x4.dot_i16x8_s (i16x8.extend_high_i8x16_s (local.get $v)) (local.get $qhi)))))
          (local.set $v (v128.load (i32.add (local.get $m3) (local.get $d))))
          (local.set $a3 (i32x4.add (local.get $a3) (i32x4.add
            (i32x4.dot_i16x8_s (i16x8.extend_low_i8x16_s (local.get $v)) (local.get $qlo))
            (i32x4.dot_i16x8_s (i16x8.extend_high_i8x16_s (local.get $v)) (local.get $qhi)))))
          (local.set $d (i32.add (local.get $d) (i32.const 16)))
          (local.set $qp (i32.add (local.get $qp) (i32.const 32)))
          (br_if $step (i32.lt_u (local.get $d) (local.get $stride))))
        (local.set $t0 (i32x4.add
          (i8x16.shuffle 0 1 2 3 4 5 6 7 16 17 18 19 20 21 22 23 (local.get $a0) (local.get $a1))
          (i8x16.shuffle 8 9 10 11 12 13 14 15 24 25 26 27 28 29 30 31 (local.get $a0) (local.get $a1))))
        (local.set $t1 (i32x4.add
          (i8x16.shuffle 0 1 2 3 4 5 6 7 16 17 18 19 20 21 22 23 (local.get $a2) (local.get $a3))
          (i8x16.shuffle 8 9 10 11 12 13 14 15 24 25 26 27 28 29 30 31 (local.get $a2) (local.get $a3))))
        (v128.store (local.get $out) (i32x4.add
          (i8x16.shuffle 0 1 2 3 8 9 10 11 16 17 18 19 24 25 26 27 (local.get $t0) (local.get $t1))
          (i8x16.shuffle 4 5 6 7 12 13 14 15 20 21 22 23 28 29 30 31 (local.get $t0) (local.get $t1))))
        (local.set $list (i32.add (local.get $list) (i32.const 16)))
        (local.set $out (i32.add (local.get $out) (i32.const 16)))
        (local.set $n (i32.sub (local.get $n) (i32.const 4)))
        (br $rows4)))
    (block $done1
      (loop $rows1
        (br_if $done1 (i32.eqz (local.get $n)))
        (local.set $m0 (i32.add (local.get $m) (i32.mul (i32.load (local.get $list)) (local.get $stride))))
        (local.set $a0 (v128.const i64x2 0 0))
        (local.set $d (i32.const 0))
        (local.set $qp (local.get $q))
        (loop $step1
          (local.set $v (v128.load (i32.add (local.get $m0) (local.get $d))))
          (local.set $a0 (i32x4.add (local.get $a0) (i32x4.add
            (i32x4.dot_i16x8_s (i16x8.extend_low_i8x16_s (local.get $v)) (v128.load offset=0 (local.get $qp)))
            (i32x4.dot_i16x8_s (i16x8.extend_high_i8x16_s (local.get $v)) (v128.load offset=16 (local.get $qp))))))
          (local.set $d (i32.add (local.get $d) (i32.const 16)))
          (local.set $qp (i32.add (local.get $qp) (i32.const 32)))
          (br_if $step1 (i32.lt_u (local.get $d) (local.get $stride))))
        (local.set $t0 (i32x4.add (local.get $a0)
          (i8x16.shuffle 8 9 10 11 12 13 14 15 0 1 2 3 4 5 6 7 (local.get $a0) (local.get $a0))))
        (i32.store (local.get $out) (i32.add
          (i32x4.extract_lane 0 (local.get $t0)) (i32x4.extract_lane 1 (local.get $t0))))
        (local.set $list (i32.add (local.get $list) (i32.const 4)))
        (local.set $out (i32.add (local.get $out) (i32.const 4)))
        (local.set $n (i32.sub (local.get $n) (i32.const 1)))
        (br $rows1))))

  ;; Sum of n floats from p (the benchmark's SIMD bandwidth reference): four f32x4
  ;; accumulators, then a 4-float loop, then a scalar tail; any n, any 4-byte aligned p.
  (func (export "sum") (param $p i32) (param $n i32) (result f32)
    (local $end i32) (local $end16 i32) (local $end4 i32) (local $s f32)
    (local $a0 v128) (local $a1 v128) (local $a2 v128) (local $a3 v128)
    (local.set $end (i32.add (local.get $p) (i32.shl (local.get $n) (i32.const 2))))
    (local.set $end16 (i32.add (local.get $p) (i32.shl (i32.and (local.get $n) (i32.const -16)) (i32.const 2))))
    (local.set $end4 (i32.add (local.get $p) (i32.shl (i32.and (local.get $n) (i32.const -4)) (i32.const 2))))
    (block $done16
      (loop $step16
        (br_if $done16 (i32.ge_u (local.get $p) (local.get $end16)))
        (local.set $a0 (f32x4.add (local.get $a0) (v128.load offset=0 (local.get $p))))
        (local.set $a1 (f32x4.add (local.get $a1) (v128.load offset=16 (local.get $p))))
        (local.set $a2 (f32x4.add (local.get $a2) (v128.load offset=32 (local.get $p))))
        (local.set $a3 (f32x4.add (local.get $a3) (v128.load offset=48 (local.get $p))))
        (local.set $p (i32.add (local.get $p) (i32.const 64)))
        (br $step16)))
    (block $done4
      (loop $step4
        (br_if $done4 (i32.ge_u (local.get $p) (local.get $end4)))
        (local.set $a0 (f32x4.add (local.get $a0) (v128.load (local.get $p))))
        (local.set $p (i32.add (local.get $p) (i32.const 16)))
        (br $step4)))
    (block $done1
      (loop $step1
        (br_if $done1 (i32.ge_u (local.get $p) (local.get $end)))
        (local.set $s (f32.add (local.get $s) (f32.load (local.get $p))))
        (local.set $p (i32.add (local.get $p) (i32.const 4)))
        (br $step1)))
    (local.set $a0 (f32x4.add
      (f32x4.add (local.get $a0) (local.get $a1))
      (f32x4.add (local.get $a2) (local.get $a3))))
    (f32.add (local.get $s) (f32.add
      (f32.add (f32x4.extract_lane 0 (local.get $a0)) (f32x4.extract_lane 1 (local.get $a0)))
      (f32.add (f32x4.extract_lane 2 (local.get $a0)) (f32x4.extract_lane 3 (local.get $a0))))))
)
