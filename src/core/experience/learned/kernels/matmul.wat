;; The fused decoder's one heavy kernel (fused-network.ts): out = a · b (+ bias), f32, WebAssembly SIMD.
;;
;;   a     m × k, row i at a + i·lda floats (any alignment: its values are loaded one at a time
;;         and splatted; rows may overlap, so the encoder's convolution windows need no copy)
;;   b     k × n, row r at b + r·ldb floats, 16-byte aligned, n a multiple of 8
;;   bias  n floats (16-byte aligned), or 0 for none
;;   out   m × n, row i at out + i·ldo floats, 16-byte aligned
;;
;; Every out[i][j] is bias[j] (or 0), then + a[i][r]·b[r][j] for r = 0, 1, … k − 1, in that order,
;; in its own lane: no sum is split or reordered, so a row's result is the same whatever rows are
;; computed beside it (four at a time or alone) — batching never changes an answer.
;;
;; Blocks: four rows × eight columns (eight f32x4 accumulators, two loads of b and four splats of
;; a per step of r), then the rows left over one at a time × eight columns.
;; expShift: out[i] = mask[i] · exp(x[i] − shift) for i < n (four lanes at a time), returning the
;; sum; exp is Cephes' expf (range reduction by ln 2, a degree-5 polynomial: relative error about
;; 1e-7, as float32's own rounding), so a softmax over a 3,853-word vocabulary costs no Math.exp.
;;
;; Compiled by scripts/build-wasm.ts (wabt) into matmul-wasm.ts; keep the binary under 4 KB.
(module
  (import "env" "memory" (memory 1))

  (func $init (param $bias i32) (param $j i32) (result v128)
    (if (result v128) (local.get $bias)
      (then (v128.load (i32.add (local.get $bias) (i32.shl (local.get $j) (i32.const 2)))))
      (else (v128.const i64x2 0 0))))

  (func (export "matmul") (param $a i32) (param $lda i32) (param $b i32) (param $ldb i32) (param $bias i32)
    (param $out i32) (param $ldo i32) (param $m i32) (param $k i32) (param $n i32)
    (local $i i32) (local $j i32) (local $r i32) (local $ap i32) (local $bp i32) (local $op i32)
    (local $aRow i32) (local $bRow i32) (local $oRow i32)
    (local $b0 v128) (local $b1 v128) (local $s v128) (local $lo v128) (local $hi v128)
    (local $c00 v128) (local $c01 v128) (local $c10 v128) (local $c11 v128)
    (local $c20 v128) (local $c21 v128) (local $c30 v128) (local $c31 v128)
    (local.set $aRow (i32.shl (local.get $lda) (i32.const 2)))
    (local.set $bRow (i32.shl (local.get $ldb) (i32.const 2)))
    (local.set $oRow (i32.shl (local.get $ldo) (i32.const 2)))
    ;; four rows at a time
    (local.set $i (i32.const 0))
    (block $rows4done
      (loop $rows4
        (br_if $rows4done (i32.gt_u (i32.add (local.get $i) (i32.const 4)) (local.get $m)))
        (local.set $j (i32.const 0))
        (loop $cols4
          (local.set $lo (call $init (local.get $bias) (local.get $j)))
          (local.set $hi (call $init (local.get $bias) (i32.add (local.get $j) (i32.const 4))))
          (local.set $c00 (local.get $lo)) (local.set $c01 (local.get $hi))
          (local.set $c10 (local.get $lo)) (local.set $c11 (local.get $hi))
          (local.set $c20 (local.get $lo)) (local.set $c21 (local.get $hi))
          (local.set $c30 (local.get $lo)) (local.set $c31 (local.get $hi))
          (local.set $ap (i32.add (local.get $a) (i32.mul (local.get $i) (local.get $aRow))))
          (local.set $bp (i32.add (local.get $b) (i32.shl (local.get $j) (i32.const 2))))
          (local.set $r (local.get $k))
          (block $kdone
            (loop $kloop
              (br_if $kdone (i32.eqz (local.get $r)))
              (local.set $b0 (v128.load (local.get $bp)))
              (local.set $b1 (v128.load offset=16 (local.get $bp)))
              (local.set $s (f32x4.splat (f32.load (local.get $ap))))
              (local.set $c00 (f32x4.add (local.get $c00) (f32x4.mul (local.get $s) (local.get $b0))))
              (local.set $c01 (f32x4.add (local.get $c01) (f32x4.mul (local.get $s) (local.get $b1))))
              (local.set $s (f32x4.splat (f32.load (i32.add (local.get $ap) (local.get $aRow)))))
              (local.set $c10 (f32x4.add (local.get $c10) (f32x4.mul (local.get $s) (local.get $b0))))
              (local.set $c11 (f32x4.add (local.get $c11) (f32x4.mul (local.get $s) (local.get $b1))))
              (local.set $s (f32x4.splat (f32.load (i32.add (local.get $ap) (i32.shl (local.get $aRow) (i32.const 1))))))
              (local.set $c20 (f32x4.add (local.get $c20) (f32x4.mul (local.get $s) (local.get $b0))))
              (local.set $c21 (f32x4.add (local.get $c21) (f32x4.mul (local.get $s) (local.get $b1))))
              (local.set $s (f32x4.splat (f32.load (i32.add (local.get $ap) (i32.mul (local.get $aRow) (i32.const 3))))))
              (local.set $c30 (f32x4.add (local.get $c30) (f32x4.mul (local.get $s) (local.get $b0))))
              (local.set $c31 (f32x4.add (local.get $c31) (f32x4.mul (local.get $s) (local.get $b1))))
              (local.set $ap (i32.add (local.get $ap) (i32.const 4)))
              (local.set $bp (i32.add (local.get $bp) (local.get $bRow)))
              (local.set $r (i32.sub (local.get $r) (i32.const 1)))
              (br $kloop)))
          (local.set $op (i32.add (local.get $out)
            (i32.add (i32.mul (local.get $i) (local.get $oRow)) (i32.shl (local.get $j) (i32.const 2)))))
          (v128.store (local.get $op) (local.get $c00))
          (v128.store offset=16 (local.get $op) (local.get $c01))
          (local.set $op (i32.add (local.get $op) (local.get $oRow)))
          (v128.store (local.get $op) (local.get $c10))
          (v128.store offset=16 (local.get $op) (local.get $c11))
          (local.set $op (i32.add (local.get $op) (local.get $oRow)))
          (v128.store (local.get $op) (local.get $c20))
          (v128.store offset=16 (local.get $op) (local.get $c21))
          (local.set $op (i32.add (local.get $op) (local.get $oRow)))
          (v128.store (local.get $op) (local.get $c30))
          (v128.store offset=16 (local.get $op) (local.get $c31))
          (local.set $j (i32.add (local.get $j) (i32.const 8)))
          (br_if $cols4 (i32.lt_u (local.get $j) (local.get $n))))
        (local.set $i (i32.add (local.get $i) (i32.const 4)))
        (br $rows4)))
    ;; the rows left over, one at a time
    (block $rows1done
      (loop $rows1
        (br_if $rows1done (i32.ge_u (local.get $i) (local.get $m)))
        (local.set $j (i32.const 0))
        (loop $cols1
          (local.set $c00 (call $init (local.get $bias) (local.get $j)))
          (local.set $c01 (call $init (local.get $bias) (i32.add (local.get $j) (i32.const 4))))
          (local.set $ap (i32.add (local.get $a) (i32.mul (local.get $i) (local.get $aRow))))
          (local.set $bp (i32.add (local.get $b) (i32.shl (local.get $j) (i32.const 2))))
          (local.set $r (local.get $k))
          (block $kdone1
            (loop $kloop1
              (br_if $kdone1 (i32.eqz (local.get $r)))
              (local.set $s (f32x4.splat (f32.load (local.get $ap))))
              (local.set $c00 (f32x4.add (local.get $c00) (f32x4.mul (local.get $s) (v128.load (local.get $bp)))))
              (local.set $c01 (f32x4.add (local.get $c01) (f32x4.mul (local.get $s) (v128.load offset=16 (local.get $bp)))))
              (local.set $ap (i32.add (local.get $ap) (i32.const 4)))
              (local.set $bp (i32.add (local.get $bp) (local.get $bRow)))
              (local.set $r (i32.sub (local.get $r) (i32.const 1)))
              (br $kloop1)))
          (local.set $op (i32.add (local.get $out)
            (i32.add (i32.mul (local.get $i) (local.get $oRow)) (i32.shl (local.get $j) (i32.const 2)))))
          (v128.store (local.get $op) (local.get $c00))
          (v128.store offset=16 (local.get $op) (local.get $c01))
          (local.set $j (i32.add (local.get $j) (i32.const 8)))
          (br_if $cols1 (i32.lt_u (local.get $j) (local.get $n))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $rows1))));; exp of four lanes (x ≤ 88): Cephes expf.
  (func $exp4 (param $x v128) (result v128)
    (local $n v128) (local $r v128) (local $y v128) (local $r2 v128)
    (local.set $x (f32x4.max (local.get $x) (v128.const f32x4 -87.3 -87.3 -87.3 -87.3)))
    (local.set $n (f32x4.floor (f32x4.add (f32x4.mul (local.get $x) (v128.const f32x4 1.44269504088896341 1.44269504088896341 1.44269504088896341 1.44269504088896341)) (v128.const f32x4 0.5 0.5 0.5 0.5))))
    (local.set $r (f32x4.sub (local.get $x) (f32x4.mul (local.get $n) (v128.const f32x4 0.693359375 0.693359375 0.693359375 0.693359375))))
    (local.set $r (f32x4.sub (local.get $r) (f32x4.mul (local.get $n) (v128.const f32x4 -2.12194440e-4 -2.12194440e-4 -2.12194440e-4 -2.12194440e-4))))
    (local.set $r2 (f32x4.mul (local.get $r) (local.get $r)))
    (local.set $y (v128.const f32x4 1.9875691500E-4 1.9875691500E-4 1.9875691500E-4 1.9875691500E-4))
    (local.set $y (f32x4.add (f32x4.mul (local.get $y) (local.get $r)) (v128.const f32x4 1.3981999507E-3 1.3981999507E-3 1.3981999507E-3 1.3981999507E-3)))
    (local.set $y (f32x4.add (f32x4.mul (local.get $y) (local.get $r)) (v128.const f32x4 8.3334519073E-3 8.3334519073E-3 8.3334519073E-3 8.3334519073E-3)))
    (local.set $y (f32x4.add (f32x4.mul (local.get $y) (local.get $r)) (v128.const f32x4 4.1665795894E-2 4.1665795894E-2 4.1665795894E-2 4.1665795894E-2)))
    (local.set $y (f32x4.add (f32x4.mul (local.get $y) (local.get $r)) (v128.const f32x4 1.6666665459E-1 1.6666665459E-1 1.6666665459E-1 1.6666665459E-1)))
    (local.set $y (f32x4.add (f32x4.mul (local.get $y) (local.get $r)) (v128.const f32x4 5.0000001201E-1 5.0000001201E-1 5.0000001201E-1 5.0000001201E-1)))
    (local.set $y (f32x4.add (f32x4.add (f32x4.mul (local.get $y) (local.get $r2)) (local.get $r)) (v128.const f32x4 1 1 1 1)))
    ;; × 2^n through the exponent bits
    (f32x4.mul (local.get $y)
      (i32x4.shl (i32x4.add (i32x4.trunc_sat_f32x4_s (local.get $n)) (v128.const i32x4 127 127 127 127)) (i32.const 23))))

  (func (export "expShift") (param $x i32) (param $mask i32) (param $n i32) (param $shift f32) (param $out i32) (result f32)
    (local $i i32) (local $e v128) (local $sum v128) (local $s v128)
    (local.set $s (f32x4.splat (local.get $shift)))
    (local.set $sum (v128.const i64x2 0 0))
    (block $done
      (loop $each
        (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
        (local.set $e (call $exp4 (f32x4.sub (v128.load (i32.add (local.get $x) (i32.shl (local.get $i) (i32.const 2)))) (local.get $s))))
        (if (local.get $mask)
          (then (local.set $e (f32x4.mul (local.get $e) (v128.load (i32.add (local.get $mask) (i32.shl (local.get $i) (i32.const 2))))))))
        (v128.store (i32.add (local.get $out) (i32.shl (local.get $i) (i32.const 2))) (local.get $e))
        (local.set $sum (f32x4.add (local.get $sum) (local.get $e)))
        (local.set $i (i32.add (local.get $i) (i32.const 4)))
        (br $each)))
    (f32.add
      (f32.add (f32x4.extract_lane 0 (local.get $sum)) (f32x4.extract_lane 2 (local.get $sum)))
      (f32.add (f32x4.extract_lane 1 (local.get $sum)) (f32x4.extract_lane 3 (local.get $sum)))))
  ;; gelu in place over n floats (n a multiple of 4): x · σ(1.702 x) = x / (1 + exp(−1.702 x)).
  (func (export "gelu") (param $x i32) (param $n i32)
    (local $p i32) (local $end i32) (local $v v128)
    (local.set $p (local.get $x))
    (local.set $end (i32.add (local.get $x) (i32.shl (local.get $n) (i32.const 2))))
    (block $done
      (loop $each
        (br_if $done (i32.ge_u (local.get $p) (local.get $end)))
        (local.set $v (v128.load (local.get $p)))
        (v128.store (local.get $p) (f32x4.div (local.get $v)
          (f32x4.add (v128.const f32x4 1 1 1 1)
            (call $exp4 (f32x4.mul (local.get $v) (v128.const f32x4 -1.702 -1.702 -1.702 -1.702))))))
        (local.set $p (i32.add (local.get $p) (i32.const 16)))
        (br $each))))

  ;; out[i] = x[i] · s for i < n (n a multiple of 4).
  (func (export "scale") (param $x i32) (param $n i32) (param $s f32) (param $out i32)
    (local $i i32) (local $sv v128)
    (local.set $sv (f32x4.splat (local.get $s)))
    (block $done
      (loop $each
        (br_if $done (i32.ge_u (local.get $i) (i32.shl (local.get $n) (i32.const 2))))
        (v128.store (i32.add (local.get $out) (local.get $i))
          (f32x4.mul (v128.load (i32.add (local.get $x) (local.get $i))) (local.get $sv)))
        (local.set $i (i32.add (local.get $i) (i32.const 16)))
        (br $each)))))
