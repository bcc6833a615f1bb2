//! Recursive-descent parser and type checker for pointwise expressions.

use super::ast::{BinaryOp, Expr, Func, UnaryOp, ValueType};
use super::lexer::{tokenize, Tok, Token};
use super::{ArgKind, PointwiseError};

/// Nesting limit, so that pathological input cannot overflow the stack.
const MAX_DEPTH: usize = 200;

struct Parser<'a> {
    tokens: Vec<Token>,
    pos: usize,
    args: &'a [(&'a str, ArgKind)],
    depth: usize,
}

fn error(column: usize, message: impl Into<String>) -> PointwiseError {
    PointwiseError { message: message.into(), column }
}

/// Parses and type-checks `src` against the operator's arguments.
pub(super) fn parse(src: &str, args: &[(&str, ArgKind)]) -> Result<Expr, PointwiseError> {
    let tokens = tokenize(src)?;
    if tokens[0].tok == Tok::End {
        return Err(error(1, "empty expression"));
    }
    let mut parser = Parser { tokens, pos: 0, args, depth: 0 };
    let expr = parser.expr()?;
    let next = parser.peek();
    if next.tok != Tok::End {
        return Err(error(next.column, format!("expected an operator or end of input, found {}", next.describe())));
    }
    Ok(expr)
}

fn comparison_op(tok: &Tok) -> Option<BinaryOp> {
    Some(match tok {
        Tok::Lt => BinaryOp::Lt,
        Tok::Le => BinaryOp::Le,
        Tok::Gt => BinaryOp::Gt,
        Tok::Ge => BinaryOp::Ge,
        Tok::EqEq => BinaryOp::Eq,
        Tok::Ne => BinaryOp::Ne,
        _ => return None,
    })
}

/// Builds a binary node, inserting the implicit conversions.
fn binary(op: BinaryOp, lhs: Expr, rhs: Expr) -> Expr {
    let (lhs, rhs) = if op.is_logical() {
        (lhs.into_bool(), rhs.into_bool())
    } else if op.is_comparison() && lhs.ty() == ValueType::Bool && rhs.ty() == ValueType::Bool {
        (lhs, rhs)
    } else {
        (lhs.into_number(), rhs.into_number())
    };
    Expr::Binary { op, lhs: Box::new(lhs), rhs: Box::new(rhs) }
}

/// Builds a call node, inserting the implicit conversions.
fn call(func: Func, args: Vec<Expr>) -> Expr {
    let args = if func == Func::Where {
        let mut it = args.into_iter();
        let (c, a, b) = (it.next().unwrap(), it.next().unwrap(), it.next().unwrap());
        let (a, b) = if a.ty() == ValueType::Bool && b.ty() == ValueType::Bool {
            (a, b)
        } else {
            (a.into_number(), b.into_number())
        };
        vec![c.into_bool(), a, b]
    } else {
        args.into_iter().map(Expr::into_number).collect()
    };
    Expr::Call { func, args }
}

impl Parser<'_> {
    fn peek(&self) -> &Token {
        &self.tokens[self.pos]
    }

    fn bump(&mut self) -> Token {
        let t = self.tokens[self.pos].clone();
        if t.tok != Tok::End {
            self.pos += 1;
        }
        t
    }

    fn expr(&mut self) -> Result<Expr, PointwiseError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(error(self.peek().column, "expression is nested too deeply"));
        }
        let e = self.or_expr();
        self.depth -= 1;
        e
    }

    fn or_expr(&mut self) -> Result<Expr, PointwiseError> {
        let mut lhs = self.and_expr()?;
        while self.peek().tok == Tok::OrOr {
            self.bump();
            let rhs = self.and_expr()?;
            lhs = binary(BinaryOp::Or, lhs, rhs);
        }
        Ok(lhs)
    }

    fn and_expr(&mut self) -> Result<Expr, PointwiseError> {
        let mut lhs = self.cmp_expr()?;
        while self.peek().tok == Tok::AndAnd {
            self.bump();
            let rhs = self.cmp_expr()?;
            lhs = binary(BinaryOp::And, lhs, rhs);
        }
        Ok(lhs)
    }

    fn cmp_expr(&mut self) -> Result<Expr, PointwiseError> {
        let lhs = self.add_expr()?;
        let Some(op) = comparison_op(&self.peek().tok) else {
            return Ok(lhs);
        };
        self.bump();
        let rhs = self.add_expr()?;
        if comparison_op(&self.peek().tok).is_some() {
            return Err(error(self.peek().column, "comparison operators cannot be chained; use parentheses or `&&`"));
        }
        Ok(binary(op, lhs, rhs))
    }

    fn add_expr(&mut self) -> Result<Expr, PointwiseError> {
        let mut lhs = self.mul_expr()?;
        loop {
            let op = match self.peek().tok {
                Tok::Plus => BinaryOp::Add,
                Tok::Minus => BinaryOp::Sub,
                _ => return Ok(lhs),
            };
            self.bump();
            let rhs = self.mul_expr()?;
            lhs = binary(op, lhs, rhs);
        }
    }

    fn mul_expr(&mut self) -> Result<Expr, PointwiseError> {
        let mut lhs = self.unary()?;
        loop {
            let op = match self.peek().tok {
                Tok::Star => BinaryOp::Mul,
                Tok::Slash => BinaryOp::Div,
                _ => return Ok(lhs),
            };
            self.bump();
            let rhs = self.unary()?;
            lhs = binary(op, lhs, rhs);
        }
    }

    fn unary(&mut self) -> Result<Expr, PointwiseError> {
        let op = match self.peek().tok {
            Tok::Minus => UnaryOp::Neg,
            Tok::Bang => UnaryOp::Not,
            _ => return self.primary(),
        };
        self.bump();
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(error(self.peek().column, "expression is nested too deeply"));
        }
        let operand = self.unary()?;
        self.depth -= 1;
        Ok(match (op, operand) {
            // Fold negated literals so that `-2` is a single constant.
            (UnaryOp::Neg, Expr::Number { value, is_float }) => Expr::Number { value: -value, is_float },
            (UnaryOp::Neg, operand) => Expr::Unary { op, operand: Box::new(operand.into_number()) },
            (UnaryOp::Not, operand) => Expr::Unary { op, operand: Box::new(operand.into_bool()) },
        })
    }

    fn primary(&mut self) -> Result<Expr, PointwiseError> {
        let token = self.bump();
        match token.tok {
            Tok::Number { value, is_float } => Ok(Expr::Number { value, is_float }),
            Tok::Ident(ref name) if name == "true" => Ok(Expr::Bool(true)),
            Tok::Ident(ref name) if name == "false" => Ok(Expr::Bool(false)),
            Tok::Ident(ref name) => {
                if self.peek().tok == Tok::LParen {
                    self.call(name, token.column)
                } else {
                    self.arg(name, token.column)
                }
            }
            Tok::LParen => {
                let e = self.expr()?;
                self.expect_rparen("`)`")?;
                Ok(e)
            }
            Tok::End => Err(error(token.column, "expected an expression, found end of input")),
            _ => Err(error(token.column, format!("expected an expression, found {}", token.describe()))),
        }
    }

    fn expect_rparen(&mut self, expected: &str) -> Result<(), PointwiseError> {
        let t = self.bump();
        if t.tok == Tok::RParen {
            Ok(())
        } else {
            Err(error(t.column, format!("expected {expected}, found {}", t.describe())))
        }
    }

    fn arg(&self, name: &str, column: usize) -> Result<Expr, PointwiseError> {
        if let Some(&(name, kind)) = self.args.iter().find(|(n, _)| *n == name) {
            return Ok(Expr::Arg { name: name.to_string(), kind });
        }
        // The one named constant (an argument called `pi` would take precedence).
        if name == "pi" {
            return Ok(Expr::Number { value: std::f64::consts::PI, is_float: true });
        }
        let valid = if self.args.is_empty() {
            "this operator has no arguments".to_string()
        } else {
            let names: Vec<&str> = self.args.iter().map(|(n, _)| *n).collect();
            format!("valid names are: {}", names.join(", "))
        };
        let hint = match Func::from_name(name) {
            Some(_) => format!(" (`{name}` is a function; call it like `{name}(...)`)"),
            None => String::new(),
        };
        Err(error(column, format!("unknown name `{name}`; {valid}{hint}")))
    }

    fn call(&mut self, name: &str, column: usize) -> Result<Expr, PointwiseError> {
        let Some(func) = Func::from_name(name) else {
            let names: Vec<&str> = Func::ALL.iter().map(|f| f.name()).collect();
            return Err(error(column, format!("unknown function `{name}`; available functions: {}", names.join(", "))));
        };
        self.bump(); // `(`
        let mut args = Vec::new();
        if self.peek().tok == Tok::RParen {
            self.bump();
        } else {
            loop {
                args.push(self.expr()?);
                let t = self.bump();
                match t.tok {
                    Tok::Comma => continue,
                    Tok::RParen => break,
                    _ => {
                        return Err(error(
                            t.column,
                            format!("expected `,` or `)` in the arguments of `{name}`, found {}", t.describe()),
                        ))
                    }
                }
            }
        }
        if args.len() != func.arity() {
            let plural = if func.arity() == 1 { "" } else { "s" };
            return Err(error(
                column,
                format!(
                    "function `{name}` takes {} argument{plural}, but {} {} given",
                    func.arity(),
                    args.len(),
                    if args.len() == 1 { "was" } else { "were" }
                ),
            ));
        }
        Ok(call(func, args))
    }
}
