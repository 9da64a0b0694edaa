fn main() {
    for path in std::env::args().skip(1) {
        match ckptsim::scenario::load(std::path::Path::new(&path)) {
            Ok(s) => println!("=== {path}\n{s:#?}"),
            Err(e) => println!("=== {path}\nERR {e}"),
        }
    }
}
