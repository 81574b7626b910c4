import equinox as eqx
import jax
import jax.numpy as jnp
import optax
from flax.struct import dataclass

TRACES = []


@dataclass
class TrainState:
    model: eqx.Module
    tx: optax.GradientTransformation
    opt_state: optax.OptState
    step: int

    def apply_gradients(self, grads):
        updates, opt_state = self.tx.update(grads, self.opt_state, self.model)
        model = eqx.apply_updates(self.model, updates)
        return self.replace(model=model, opt_state=opt_state, step=self.step + 1)  # expect: JAX402


@eqx.filter_jit
def train_step(state, x, y):
    TRACES.append(1)

    def loss(model):
        return jnp.mean((jax.vmap(model)(x) - y) ** 2)

    grads = eqx.filter_grad(loss)(state.model)
    return state.apply_gradients(grads)


model = eqx.nn.MLP(2, 1, 8, 1, key=jax.random.key(0))
tx = optax.sgd(1e-2)
state = TrainState(model=model, tx=tx, opt_state=tx.init(eqx.filter(model, eqx.is_array)), step=0)
x = jnp.ones((16, 2))
y = jnp.zeros((16, 1))
for _ in range(4):
    state = train_step(state, x, y)
if len(TRACES) > 1:
    print(f"OBSERVED: train_step compiled {len(TRACES)} times in 4 steps")
