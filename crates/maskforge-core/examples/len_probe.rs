use std::time::Instant;
fn main() {
    for n in [256u32, 1000, 4096] {
        let t = Instant::now();
        let re = maskforge_core::automata::json::string_with_length(0, Some(n));
        let dfa = re.compile(2_000_000, 20_000_000);
        match dfa { Ok(d) => println!("{n}: {} states {:?}", d.state_count(), t.elapsed()), Err(_) => println!("{n}: err {:?}", t.elapsed()) }
    }
}
