//! A network's parameters as one flat `f32` buffer, the form every driver, transport and
//! protocol moves: the parameters in the order [`Module::visit`] meets them, each row-major.

use burn::module::{Module, ModuleMapper, ModuleVisitor, Param};
use burn::prelude::*;
use burn::tensor::{Gradients, TensorData};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// The shape of every parameter, in flat order.
pub fn shapes<M: Module>(m: &M) -> Vec<Vec<usize>> {
    struct Shapes(Vec<Vec<usize>>);
    impl ModuleVisitor for Shapes {
        fn visit_float<const D: usize>(&mut self, p: &Param<Tensor<D>>) {
            self.0.push(p.val().dims().to_vec());
        }
    }
    let mut v = Shapes(Vec::new());
    m.visit(&mut v);
    v.0
}

/// A seeded initial buffer for parameters of `shapes`: convolution weights uniform in
/// `±sqrt(6 / fan_in)` (He et al. 2015, for ReLU networks), fully connected weights in
/// `±1 / sqrt(fan_in)` (PyTorch's default for linear layers, which keeps the initial logits
/// small), every one-dimensional parameter (bias, normalisation shift and scale - 1) zero. burn's own initialisers draw from a
/// process-wide generator; drawing here keeps runs that share a process (seeds on both cores)
/// reproducible.
pub fn initial(shapes: &[Vec<usize>], seed: u64) -> Vec<f32> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x0C22_1417_0000_0001);
    let mut out = Vec::with_capacity(shapes.iter().map(|s| s.iter().product::<usize>()).sum());
    for s in shapes {
        let n: usize = s.iter().product();
        // Conv weights are [out, in, kh, kw]; linear weights [in, out].
        let bound = match s.len() {
            4 => (6.0 / (s[1] * s[2] * s[3]) as f64).sqrt(),
            2 => 1.0 / (s[0] as f64).sqrt(),
            _ => 0.0,
        } as f32;
        if bound == 0.0 {
            out.extend(std::iter::repeat_n(0.0, n));
        } else {
            out.extend((0..n).map(|_| rng.gen_range(-bound..bound)));
        }
    }
    out
}

/// `m` with its parameters replaced by `flat`'s values (tracked for gradients when `m` lives
/// on an autodiff device).
///
/// # Panics
/// When `flat`'s length is not the network's parameter count: a model of another network
/// reached the workload, which is a bug of the caller, named in the message.
pub fn load<M: Module>(m: M, flat: &[f32]) -> M {
    struct Load<'a> {
        flat: &'a [f32],
        at: usize,
    }
    impl ModuleMapper for Load<'_> {
        fn map_float<const D: usize>(&mut self, p: Param<Tensor<D>>) -> Param<Tensor<D>> {
            let (flat, at) = (self.flat, &mut self.at);
            p.map(|t| {
                let shape = t.shape();
                let n = shape.num_elements();
                let device = t.device();
                assert!(
                    *at + n <= flat.len(),
                    "a model of {} values reached a network with more parameters",
                    flat.len()
                );
                let data = TensorData::new(flat[*at..*at + n].to_vec(), shape);
                *at += n;
                let t = Tensor::<D>::from_data(data, &device);
                if device.is_autodiff() {
                    t.require_grad()
                } else {
                    t
                }
            })
        }
    }
    let mut loader = Load { flat, at: 0 };
    let m = m.map(&mut loader);
    assert_eq!(
        loader.at,
        flat.len(),
        "a model of {} values reached a network of {} parameters",
        flat.len(),
        loader.at
    );
    m
}

/// The gradient of every parameter of `m` from `grads`, in flat order (zeros for a parameter
/// the loss does not reach).
pub fn gradient<M: Module>(m: &M, grads: &mut Gradients, len: usize) -> Vec<f32> {
    struct Grab<'a> {
        grads: &'a mut Gradients,
        out: Vec<f32>,
    }
    impl ModuleVisitor for Grab<'_> {
        fn visit_float<const D: usize>(&mut self, p: &Param<Tensor<D>>) {
            let t = p.val();
            let n = t.shape().num_elements();
            match t.grad_remove(self.grads) {
                Some(g) => self.out.extend(
                    g.into_data()
                        .try_to_vec::<f32>()
                        .expect("float gradients are f32"),
                ),
                None => self.out.extend(std::iter::repeat_n(0.0, n)),
            }
        }
    }
    let mut v = Grab {
        grads,
        out: Vec::with_capacity(len),
    };
    m.visit(&mut v);
    v.out
}
