import icepool


def cortex(sizes, difficulty):
    def read(*faces):
        dice = sorted(((f, -n) for f, n in zip(faces, sizes) if f > 1), reverse=True)
        total = sum(f for f, _ in dice[:2])
        if not dice:
            return "botch"
        return "failure" if total < difficulty else (
            "heroic success" if total >= difficulty + 5 else "success")
    return icepool.map(read, *(icepool.d(n) for n in sizes))
