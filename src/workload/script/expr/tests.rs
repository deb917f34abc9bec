//! The expression language checked against pgbench 15 itself: unless a comment says
//! otherwise, every expected value and run-time error below is what PostgreSQL 15.18's
//! pgbench printed for `\set v <expression>` (the value read back from the `select :v` it
//! then sent with `--debug`). Also the helpers `tests_parse` shares.

use super::{parse, Env, Value};
use crate::workload::pg_prng::PgPrng;

/// A client with named variables, a seeded random source and a record of `debug` calls.
pub(super) struct TestEnv {
    names: Vec<String>,
    values: Vec<Option<Value>>,
    pub(super) rng: PgPrng,
    pub(super) debugged: Vec<Value>,
}

impl TestEnv {
    pub(super) fn new() -> Self {
        TestEnv {
            names: Vec::new(),
            values: Vec::new(),
            rng: PgPrng::seeded(42),
            debugged: Vec::new(),
        }
    }

    fn slot(&mut self, name: &str) -> usize {
        if let Some(i) = self.names.iter().position(|n| n == name) {
            return i;
        }
        self.names.push(name.to_string());
        self.values.push(None);
        self.names.len() - 1
    }

    pub(super) fn set(&mut self, name: &str, v: Value) {
        let slot = self.slot(name);
        self.values[slot] = Some(v);
    }

    pub(super) fn eval(&mut self, text: &str) -> Result<Value, String> {
        let expr = {
            let mut intern = |name: &str| self.slot(name);
            parse(text, &mut intern).unwrap_or_else(|e| panic!("{text:?} does not parse: {e}"))
        };
        expr.eval(self)
    }
}

impl Env for TestEnv {
    fn var(&mut self, slot: usize) -> Result<Value, String> {
        self.values[slot].ok_or_else(|| format!("undefined variable \"{}\"", self.names[slot]))
    }

    fn rng(&mut self) -> &mut PgPrng {
        &mut self.rng
    }

    fn debug(&mut self, value: &Value) {
        self.debugged.push(*value);
    }
}

/// The expression's value as pgbench substitutes it, or its run-time error.
pub(super) fn run(text: &str) -> String {
    let mut env = TestEnv::new();
    env.set("default_seed", Value::Int(424242));
    match env.eval(text) {
        Ok(v) => {
            let mut s = String::new();
            v.write_text(&mut s);
            s
        }
        Err(e) => e,
    }
}

fn check(cases: &[(&str, &str)]) {
    for (text, want) in cases {
        assert_eq!(run(text), *want, "{text}");
    }
}

#[test]
fn precedence_and_associativity() {
    check(&[
        ("1 + 2 * 3 - 4 / 2 % 3", "5"),
        ("1 - 2 - 3", "-4"),
        ("100 / 10 / 5", "2"),
        ("2 << 1 + 1", "8"),
        ("6 & 3 | 8 # 1", "11"),
        ("1 | 2 = 3", "true"),
        ("true and false or true", "true"),
        ("not true and false", "false"),
        ("not (true and false)", "true"),
        ("1 < 2 and 2 < 3", "true"),
        ("1 = 1 is true", "true"),
        ("1 = 1 isnull", "false"),
        ("not 1 = 1", "false"),
        // `~` binds at the bitwise level, looser than + and *, even after *.
        ("~1+2", "-4"),
        ("2 * ~1 + 3", "-10"),
        ("~1 | 2", "-2"),
        ("~ ~ 1", "1"),
        ("- - 1", "1"),
        ("--1", "1"),
        ("1 + + 2", "3"),
        ("- 2 isnull", "false"),
        ("not not true", "true"),
        ("1 isnull isnull", "false"),
        ("1 is null is null", "false"),
        ("1 isnull isnull isnull", "false"),
        ("1 is null isnull", "false"),
        ("NULL is NULL is TRUE", "true"),
        ("1 isnull = false", "cannot coerce boolean to int"),
        ("1 < 2 isnull < 3", "cannot coerce boolean to int"),
        ("CaSe WhEn TrUe ThEn 7 EnD", "7"),
        ("ABS(-3)", "3"),
        ("abs (-1)", "1"),
        ("1 +\\\n 2", "3"),
    ]);
}

#[test]
fn integer_edges_overflow_and_division() {
    check(&[
        ("9223372036854775807", "9223372036854775807"),
        ("-9223372036854775808", "-9223372036854775808"),
        ("-9223372036854775808 - 1", "bigint sub out of range"),
        ("5 - -9223372036854775808", "bigint sub out of range"),
        ("9223372036854775807 + 1", "bigint add out of range"),
        ("4611686018427387904 * 2", "bigint mul out of range"),
        ("-(-9223372036854775807-1)", "bigint sub out of range"),
        ("(-9223372036854775807-1) / -1", "bigint div out of range"),
        ("(-9223372036854775807-1) % -1", "0"),
        ("abs(-9223372036854775807-1)", "-9223372036854775808"),
        ("7 % -3", "1"),
        ("-7 / 2", "-3"),
        ("1/0", "division by zero"),
        ("1%0", "division by zero"),
        ("1.0/0", "Infinity"),
        ("-1.0/0", "-Infinity"),
        ("0.0/0", "NaN"),
        ("1.5 % 1", "0"),
        ("mod(7,3)", "1"),
        ("mod(7.5,2)", "0"),
        ("1 << 64", "1"),
        ("1 << 65", "2"),
        ("-8 >> 1", "-4"),
        ("1 << -1", "-9223372036854775808"),
        ("00000000000000000000000001", "1"),
        ("0e-400", "0"),
        ("1.e5", "100000"),
        (".5", "0.5"),
        ("0.0 * -1.0", "-0"),
        ("abs(0.0 * -1.0)", "-0"),
        ("1e300*1e300", "Infinity"),
    ]);
}

#[test]
fn types_and_coercions() {
    check(&[
        ("true = true", "cannot coerce boolean to int"),
        ("1 + true", "cannot coerce boolean to int"),
        ("1.0 + true", "cannot coerce boolean to double"),
        ("1.5 < 2", "true"),
        ("2 = 2.0", "true"),
        ("3 <> 3", "false"),
        ("3 != 2", "true"),
        ("3 >= 3", "true"),
        ("3 > 3.5", "false"),
        (
            "int(1e19)",
            "double to int overflow for 10000000000000000000.000000",
        ),
        (
            "int(-1e19)",
            "double to int overflow for -10000000000000000000.000000",
        ),
        ("int(0.0/0)", "double to int overflow for NaN"),
        ("int(2.5)", "2"),
        ("int(3.5)", "4"),
        ("int(-2.5)", "-2"),
        ("int(true)", "cannot coerce boolean to int"),
        ("double(true)", "cannot coerce boolean to double"),
        ("abs(true)", "4.94065645841247e-324"),
        ("abs(false)", "0"),
        ("least(1, 2.0, true)", "cannot coerce boolean to double"),
        ("greatest(3, 1.5)", "3"),
        ("random(2.5, 2.5)", "2"),
        ("random(1.6, 2.4)", "2"),
        ("random(true, 3)", "cannot coerce boolean to int"),
        (
            "random_zipfian(1,10,true)",
            "cannot coerce boolean to double",
        ),
        ("hash(1.7, 2)", "8628357597987678224"),
        ("not 1", "cannot coerce int to boolean"),
        ("1.5 and true", "cannot coerce double to boolean"),
    ]);
}

#[test]
fn null_and_three_valued_logic() {
    check(&[
        ("null and false", "NULL"),
        ("false and null", "false"),
        ("true and null", "NULL"),
        ("null or true", "NULL"),
        ("true or null", "true"),
        ("false or null", "NULL"),
        ("not null", "NULL"),
        ("null = null", "NULL"),
        ("null is null", "true"),
        ("1 is true", "false"),
        ("true is true", "true"),
        ("false is not true", "true"),
        ("null is not false", "true"),
        ("1 notnull", "true"),
        ("least(1,2,null)", "NULL"),
        ("debug(null)", "NULL"),
        ("hash(null)", "NULL"),
        ("permute(1, 10, null)", "NULL"),
        // Lazy: the right side is never evaluated, so its error never happens.
        ("false and 1/0 = 1", "false"),
        ("null or 1/0 = 1", "NULL"),
    ]);
}

#[test]
fn case() {
    check(&[
        (
            "case when 0 then 1 when 0.0 then 2 when null then 3 else 4 end",
            "4",
        ),
        ("case when 2 then 1 end", "1"),
        ("case when false then 1 end", "NULL"),
        ("case when true then 1 else 1/0 end", "1"),
    ]);
}

#[test]
fn functions_on_fixed_inputs() {
    check(&[
        ("pi()", "3.14159265358979"),
        ("exp(1)", "2.71828182845905"),
        ("ln(10)", "2.30258509299405"),
        ("sqrt(2)", "1.4142135623731"),
        ("pow(2,10)", "1024"),
        ("power(2,0.5)", "1.4142135623731"),
        ("sqrt(-1)", "NaN"),
        ("ln(0)", "-Infinity"),
        ("ln(-1)", "NaN"),
        ("debug(1.5)", "1.5"),
        ("abs(,-2)", "2"),
        ("least(,1,2)", "1"),
        ("least(1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16)", "1"),
        (
            "least(1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17)",
            "too many function arguments, maximum is 16",
        ),
        ("random(1,1)", "1"),
        ("random(5,1)", "empty range given to random"),
        (
            "random(0, 9223372036854775807)",
            "random range is too large",
        ),
        (
            "random(-9223372036854775807-1, 0)",
            "random range is too large",
        ),
        (
            "random_gaussian(1,10,1.5)",
            "gaussian parameter must be at least 2.000000 (not 1.500000)",
        ),
        ("random_gaussian(1,10,0.0/0)", "-9223372036854775807"),
        (
            "random_exponential(1,10,0)",
            "exponential parameter must be greater than zero (not 0.000000)",
        ),
        (
            "random_exponential(1,10,-1.5)",
            "exponential parameter must be greater than zero (not -1.500000)",
        ),
        (
            "random_zipfian(1,10,1.0)",
            "zipfian parameter must be in range [1.001, 1000] (not 1.000000)",
        ),
        (
            "random_zipfian(1,10,1000.5)",
            "zipfian parameter must be in range [1.001, 1000] (not 1000.500000)",
        ),
        (
            "permute(1, 0)",
            "permute size parameter must be greater than zero",
        ),
        (
            "permute(1, -5, 3)",
            "permute size parameter must be greater than zero",
        ),
        ("permute(5, 1, 3)", "0"),
        // Not from pgbench, which would loop forever on a NaN zipfian parameter.
        (
            "random_zipfian(1,10,0.0/0)",
            "zipfian parameter must be in range [1.001, 1000] (not NaN)",
        ),
    ]);
    let mut env = TestEnv::new();
    for _ in 0..200 {
        let Value::Int(r) = env.eval("random(-3, 3)").unwrap() else {
            panic!("not an int")
        };
        assert!((-3..=3).contains(&r));
    }
    assert_eq!(
        env.eval("debug(2) + debug(true is true)"),
        Err("cannot coerce boolean to int".to_string())
    );
    assert_eq!(env.debugged, vec![Value::Int(2), Value::Bool(true)]);
    assert_eq!(
        env.eval(":nope + 1"),
        Err("undefined variable \"nope\"".to_string())
    );
    env.set("x", Value::Double(2.5));
    assert_eq!(env.eval(":x * 2"), Ok(Value::Double(5.0)));
}

#[test]
fn hashes_match_pgbench() {
    const MIN: &str = "(-9223372036854775807-1)";
    let values = [
        "0",
        "1",
        "-1",
        "12345",
        MIN,
        "9223372036854775807",
        "1000000007",
    ];
    let seeds = ["0", "678", "-1", "5432", MIN];
    #[rustfmt::skip]
    let murmur2: [[i64; 5]; 7] = [
        [8217090173679840641, 8805217977860530227, -1429387546045227835, 6045885599107954120, 5365366227499048315],
        [-8089716718896805586, -8469379443040758173, 8383142988610529298, 8409120883607651217, 7505303408632055305],
        [4219408603045787357, -6398715302516227830, 1317380444104773032, 3202824124722859978, 7071132549226612610],
        [-8599128181304237022, -3461122863905194782, -6513328224428820182, 550144705836202639, 6995891946224465757],
        [9158703207903963431, -5185926321550355690, 5949093009533562506, -2711967873914999986, -6436316919624885688],
        [-6118008551640328833, -2335058424080860074, -7449049946749928351, -4755676558467274251, -8969732497821252539],
        [-8370684797976238369, 5474555123817022161, -5844748148003046803, 4562699451867336147, 7224335329552497142],
    ];
    #[rustfmt::skip]
    let fnv1a: [[i64; 5]; 7] = [
        [-6284781860667377211, 1391325786067382243, 4052466453699787802, 5600063106439994301, 2938590176187398597],
        [-8517097267634966620, -840989620900207166, 6284781860667377211, 3367747699472404892, 706274769219809188],
        [-8289690350564177859, 7941512977581687387, 9116541788052886162, 3795662180246657077, 933681686290597949],
        [-1792800413050876852, -4997051310545852918, 5735077006562332211, -3356549155111684876, 7430571623803898956],
        [-6284922598155788219, 1391466523555793251, 4052607191188198810, 5599922368951583293, 2938449438698987589],
        [-8289549613075766851, 7941372240093276379, 9116682525541297170, 3795802917735068085, 933822423779008957],
        [-492478524561404093, 6751657311959932521, 127287787110364228, -2589643960640136437, 8730893512293371715],
    ];
    for (i, v) in values.iter().enumerate() {
        for (j, s) in seeds.iter().enumerate() {
            assert_eq!(
                run(&format!("hash_murmur2({v}, {s})")),
                murmur2[i][j].to_string(),
                "murmur2({v}, {s})"
            );
            assert_eq!(
                run(&format!("hash_fnv1a({v}, {s})")),
                fnv1a[i][j].to_string(),
                "fnv1a({v}, {s})"
            );
        }
    }
    // One argument: the seed is :default_seed (424242 here, as set in pgbench's script).
    check(&[
        ("hash(12345)", "-5331721868208635281"),
        ("hash_fnv1a(12345)", "-2790465857020117442"),
        ("hash_murmur2(-7)", "-7248859584994828648"),
    ]);
}

#[test]
fn permute_matches_pgbench() {
    check(&[
        ("permute(0, 2, 0)", "0"),
        ("permute(1, 2, 0)", "1"),
        ("permute(0, 3, 1)", "0"),
        ("permute(1, 3, 1)", "2"),
        ("permute(2, 3, 1)", "1"),
        ("permute(7, 100, 12345)", "62"),
        ("permute(-1, 100, 12345)", "69"),
        ("permute(150, 100, 12345)", "12"),
        ("permute(999, 1000, -1)", "160"),
        ("permute(123456789, 1099511627783, 42)", "982731587981"),
        (
            "permute(9223372036854775806, 9223372036854775807, 7)",
            "7947516677821898419",
        ),
        (
            "permute(-5, 9223372036854775807, (-9223372036854775807-1))",
            "2956891604958045648",
        ),
        ("permute(3, 4, 99)", "3"),
        ("permute(0, 1, 5)", "0"),
        ("permute(17, 17, 17)", "14"),
        // Two arguments: the seed is :default_seed (424242).
        ("permute(3, 10)", "4"),
    ]);
    let by_5432: Vec<String> = (0..10)
        .map(|i| run(&format!("permute({i}, 10, 5432)")))
        .collect();
    assert_eq!(by_5432, ["6", "5", "3", "8", "0", "7", "1", "4", "9", "2"]);
    let by_minus_3: Vec<String> = (0..7)
        .map(|i| run(&format!("permute({i}, 7, -3)")))
        .collect();
    assert_eq!(by_minus_3, ["0", "6", "5", "1", "4", "2", "3"]);
}
