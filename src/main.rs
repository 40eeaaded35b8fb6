fn main() {
    std::process::exit(selfdebug::cli::run());
}
