from minipyro.svi import SVI

svi = SVI(seed=0)
losses = [float(svi.step(0.3)) for _ in range(4)]
if len(set(losses)) == 1:
    print(f"OBSERVED: 4 SVI steps gave the same Monte Carlo loss {losses[0]:.6f}")
