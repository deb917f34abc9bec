//! Evaluation, as pgbench 15's `evaluateExpr`/`evalFunc` do it: `AND`, `OR` and `CASE` are
//! lazy; every other call evaluates all its arguments first (at most 16), and gives NULL if
//! any is NULL (except `IS` and `debug`); int op int stays int with overflow errors, a double
//! on either side makes it double (except `%`, which is integer only and rounds doubles);
//! errors carry pgbench's wording. Nothing allocates unless an error is returned.

use super::hash::{hash_fnv1a, hash_murmur2, permute};
use super::random;
use super::value::c_fixed;
use super::{Env, Expr, Func, Node, Value};

/// pgbench evaluates at most this many arguments of a call (`MAX_FARGS`).
const MAX_FARGS: usize = 16;

const MIN_GAUSSIAN_PARAM: f64 = 2.0;
const MIN_ZIPFIAN_PARAM: f64 = 1.001;
const MAX_ZIPFIAN_PARAM: f64 = 1000.0;

impl Expr {
    pub(super) fn eval_node(&self, id: u32, env: &mut dyn Env) -> Result<Value, String> {
        match self.nodes[id as usize] {
            Node::Const(v) => Ok(v),
            Node::Var(slot) => env.var(slot),
            Node::Call { func, first, len } => {
                let args = &self.args[first as usize..(first + len) as usize];
                match func {
                    Func::And | Func::Or => self.and_or(func == Func::And, args, env),
                    Func::Case => self.case(args, env),
                    _ => self.strict(func, args, env),
                }
            }
        }
    }

    /// `AND`/`OR`: a NULL left side gives NULL without looking at the right side (pgbench's
    /// rule, not SQL's); a decisive left side gives its answer; otherwise the right side,
    /// which must be a boolean or NULL, is the answer.
    fn and_or(&self, is_and: bool, args: &[u32], env: &mut dyn Env) -> Result<Value, String> {
        let left = self.eval_node(args[0], env)?;
        if left == Value::Null {
            return Ok(Value::Null);
        }
        if to_bool(&left)? != is_and {
            return Ok(Value::Bool(!is_and));
        }
        match self.eval_node(args[1], env)? {
            Value::Null => Ok(Value::Null),
            right => Ok(Value::Bool(to_bool(&right)?)),
        }
    }

    /// `CASE`: arguments are condition, value pairs and the `ELSE` value; conditions are
    /// tested by truth (NULL and zero are false), so they need not be booleans.
    fn case(&self, args: &[u32], env: &mut dyn Env) -> Result<Value, String> {
        let (pairs, otherwise) = args.split_at(args.len() - 1);
        for pair in pairs.chunks_exact(2) {
            if self.eval_node(pair[0], env)?.truth() {
                return self.eval_node(pair[1], env);
            }
        }
        self.eval_node(otherwise[0], env)
    }

    fn strict(&self, func: Func, args: &[u32], env: &mut dyn Env) -> Result<Value, String> {
        let mut v = [Value::Null; MAX_FARGS];
        let n = args.len().min(MAX_FARGS);
        let mut has_null = false;
        for (slot, &arg) in v.iter_mut().zip(&args[..n]) {
            *slot = self.eval_node(arg, env)?;
            has_null |= *slot == Value::Null;
        }
        if args.len() > MAX_FARGS {
            return Err(format!(
                "too many function arguments, maximum is {MAX_FARGS}"
            ));
        }
        if has_null && !matches!(func, Func::Is | Func::Debug) {
            return Ok(Value::Null);
        }
        apply(func, &v[..n], env)
    }
}

/// A strict function on its evaluated arguments (none NULL, unless `IS` or `debug`).
fn apply(func: Func, v: &[Value], env: &mut dyn Env) -> Result<Value, String> {
    use Value::{Bool, Double, Int};
    Ok(match func {
        Func::Add
        | Func::Sub
        | Func::Mul
        | Func::Div
        | Func::Mod
        | Func::Eq
        | Func::Ne
        | Func::Le
        | Func::Lt => arith(func, &v[0], &v[1])?,
        Func::BitAnd | Func::BitOr | Func::BitXor | Func::Shl | Func::Shr => {
            let (l, r) = (to_int(&v[0])?, to_int(&v[1])?);
            Int(match func {
                Func::BitAnd => l & r,
                Func::BitOr => l | r,
                Func::BitXor => l ^ r,
                // C's shift on x86-64 uses the count modulo 64, as these do.
                Func::Shl => l.wrapping_shl(r as u32),
                _ => l.wrapping_shr(r as u32),
            })
        }
        Func::Not => Bool(!to_bool(&v[0])?),
        Func::Pi => Double(std::f64::consts::PI),
        Func::Abs => match v[0] {
            // |i64::MIN| wraps to itself, as in pgbench.
            Int(i) => Int(i.wrapping_abs()),
            // `d < 0.0 ? -d : d`, so -0.0 stays -0.0.
            Double(d) => Double(if d < 0.0 { -d } else { d }),
            // pgbench reads a boolean through the double of its value union: abs(true) is
            // the smallest subnormal (4.94065645841247e-324), abs(false) is 0.
            Bool(b) => Double(f64::from_bits(b as u64)),
            Value::Null => unreachable!("NULL arguments give NULL before this"),
        },
        Func::Debug => {
            env.debug(&v[0]);
            v[0]
        }
        Func::Double | Func::Sqrt | Func::Ln | Func::Exp => {
            let d = to_double(&v[0])?;
            Double(match func {
                Func::Sqrt => d.sqrt(),
                Func::Ln => d.ln(),
                Func::Exp => d.exp(),
                _ => d,
            })
        }
        Func::Int => Int(to_int(&v[0])?),
        Func::Least | Func::Greatest => extremum(func == Func::Least, v)?,
        Func::Random | Func::RandomGaussian | Func::RandomExponential | Func::RandomZipfian => {
            Int(draw(func, v, env)?)
        }
        Func::Pow => Double(to_double(&v[0])?.powf(to_double(&v[1])?)),
        // Both sides of the same type and, for booleans, the same truth (the right side is
        // always the constant NULL, TRUE or FALSE).
        Func::Is => Bool(match (v[0], v[1]) {
            (Value::Null, Value::Null) => true,
            (Bool(a), Bool(b)) => a == b,
            (Int(a), Int(b)) => a == b,
            (Double(a), Double(b)) => a == b,
            _ => false,
        }),
        Func::HashMurmur2 => Int(hash_murmur2(to_int(&v[0])?, to_int(&v[1])?)),
        Func::HashFnv1a => Int(hash_fnv1a(to_int(&v[0])?, to_int(&v[1])?)),
        Func::Permute => {
            let (i, size, seed) = (to_int(&v[0])?, to_int(&v[1])?, to_int(&v[2])?);
            if size <= 0 {
                return Err("permute size parameter must be greater than zero".to_string());
            }
            Int(permute(i, size, seed))
        }
        Func::And | Func::Or | Func::Case => unreachable!("lazy functions are evaluated apart"),
    })
}

/// The overloaded arithmetic and comparison operators.
fn arith(func: Func, l: &Value, r: &Value) -> Result<Value, String> {
    use Value::{Bool, Double, Int};
    let either_double = matches!(l, Double(_)) || matches!(r, Double(_));
    if either_double && func != Func::Mod {
        let (a, b) = (to_double(l)?, to_double(r)?);
        return Ok(match func {
            Func::Add => Double(a + b),
            Func::Sub => Double(a - b),
            Func::Mul => Double(a * b),
            Func::Div => Double(a / b),
            Func::Eq => Bool(a == b),
            Func::Ne => Bool(a != b),
            Func::Le => Bool(a <= b),
            _ => Bool(a < b),
        });
    }
    let (a, b) = (to_int(l)?, to_int(r)?);
    Ok(match func {
        Func::Add => Int(a.checked_add(b).ok_or("bigint add out of range")?),
        Func::Sub => Int(a.checked_sub(b).ok_or("bigint sub out of range")?),
        Func::Mul => Int(a.checked_mul(b).ok_or("bigint mul out of range")?),
        Func::Div | Func::Mod => {
            if b == 0 {
                return Err("division by zero".to_string());
            }
            match (func, b) {
                (Func::Div, -1) => Int(a.checked_neg().ok_or("bigint div out of range")?),
                (_, -1) => Int(0),
                (Func::Div, _) => Int(a / b),
                _ => Int(a % b),
            }
        }
        Func::Eq => Bool(a == b),
        Func::Ne => Bool(a != b),
        Func::Le => Bool(a <= b),
        _ => Bool(a < b),
    })
}

/// `least`/`greatest`: double if any argument is, else int; booleans are errors.
fn extremum(least: bool, v: &[Value]) -> Result<Value, String> {
    if v.iter().any(|x| matches!(x, Value::Double(_))) {
        let mut best = to_double(&v[0])?;
        for x in &v[1..] {
            let d = to_double(x)?;
            best = if least {
                c_min(best, d)
            } else {
                c_max(best, d)
            };
        }
        Ok(Value::Double(best))
    } else {
        let mut best = to_int(&v[0])?;
        for x in &v[1..] {
            let i = to_int(x)?;
            best = if least { best.min(i) } else { best.max(i) };
        }
        Ok(Value::Int(best))
    }
}

/// C's `Min` macro, `x < y ? x : y`, whose answer with a NaN differs from `f64::min`.
fn c_min(x: f64, y: f64) -> f64 {
    if x < y {
        x
    } else {
        y
    }
}

/// C's `Max` macro, `x > y ? x : y`.
fn c_max(x: f64, y: f64) -> f64 {
    if x > y {
        x
    } else {
        y
    }
}

/// `random`, `random_gaussian`, `random_exponential`, `random_zipfian`, with pgbench's checks
/// of the range and of the parameter, in pgbench's order.
fn draw(func: Func, v: &[Value], env: &mut dyn Env) -> Result<i64, String> {
    let (min, max) = (to_int(&v[0])?, to_int(&v[1])?);
    if min > max {
        return Err("empty range given to random".to_string());
    }
    // Every distribution needs max - min + 1 as an int64.
    if max
        .checked_sub(min)
        .and_then(|d| d.checked_add(1))
        .is_none()
    {
        return Err("random range is too large".to_string());
    }
    if func == Func::Random {
        return Ok(random::uniform(env.rng(), min, max));
    }
    let param = to_double(&v[2])?;
    match func {
        Func::RandomGaussian => {
            if param < MIN_GAUSSIAN_PARAM {
                return Err(format!(
                    "gaussian parameter must be at least {} (not {})",
                    c_fixed(MIN_GAUSSIAN_PARAM),
                    c_fixed(param)
                ));
            }
            Ok(random::gaussian(env.rng(), min, max, param))
        }
        Func::RandomZipfian => {
            // pgbench lets NaN through and then loops forever; refuse it instead.
            if !(MIN_ZIPFIAN_PARAM..=MAX_ZIPFIAN_PARAM).contains(&param) {
                return Err(format!(
                    "zipfian parameter must be in range [{MIN_ZIPFIAN_PARAM:.3}, {MAX_ZIPFIAN_PARAM:.0}] (not {})",
                    c_fixed(param)
                ));
            }
            Ok(random::zipfian(env.rng(), min, max, param))
        }
        _ => {
            if param <= 0.0 {
                return Err(format!(
                    "exponential parameter must be greater than zero (not {})",
                    c_fixed(param)
                ));
            }
            Ok(random::exponential(env.rng(), min, max, param))
        }
    }
}

/// pgbench's `coerceToBool`: only booleans are booleans.
fn to_bool(v: &Value) -> Result<bool, String> {
    match *v {
        Value::Bool(b) => Ok(b),
        _ => Err(format!("cannot coerce {} to boolean", v.type_name())),
    }
}

/// pgbench's `coerceToInt`: doubles round to nearest (ties to even), and must then fit.
fn to_int(v: &Value) -> Result<i64, String> {
    match *v {
        Value::Int(i) => Ok(i),
        Value::Double(d) => {
            let r = d.round_ties_even();
            // [-2^63, 2^63): the doubles that convert to an int64 exactly.
            if (-9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0).contains(&r) {
                Ok(r as i64)
            } else {
                Err(format!("double to int overflow for {}", c_fixed(r)))
            }
        }
        _ => Err(format!("cannot coerce {} to int", v.type_name())),
    }
}

/// pgbench's `coerceToDouble`: ints convert, booleans and NULL do not.
fn to_double(v: &Value) -> Result<f64, String> {
    match *v {
        Value::Double(d) => Ok(d),
        Value::Int(i) => Ok(i as f64),
        _ => Err(format!("cannot coerce {} to double", v.type_name())),
    }
}
