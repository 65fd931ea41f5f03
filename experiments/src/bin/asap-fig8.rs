//! asap-fig8: NOTIFY-ACK, BSP and ASYNC training ASAP's VGG on CIFAR-10 with 8 peers
//! all-reduce over single-slot receive buffers (ASAP §6.2, Fig 8): throughput in images per
//! second and time to the training-accuracy target. Needs the `cnn` feature; a build without it
//! writes the claims as not applicable, saying why.
//!
//! The experiment is [`experiments::papers::asap::fig8`], compiled once in the library.

fn main() -> std::process::ExitCode {
    experiments::papers::asap::fig8::main()
}
